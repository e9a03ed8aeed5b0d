"""Vectors of every related-work scheme can be signed as votes and verified by a peer."""

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pspam.auth.credentials import new_user_key, public_bytes
from p2pspam.auth.verify import VoteVerifier
from p2pspam.auth.votes import sign_vote
from p2pspam.fingerprint import canonical_text, get_scheme
from p2pspam.fingerprint.normalize import CanonicalBody

NOW = 1_700_000_000_000
DAY = 86_400_000
TEXT = (
    "Dear friend, you have been selected to receive a cash prize of one million dollars. "
    "To claim your prize send your bank account number and a small processing fee to our "
    "agent today. This offer expires soon, act now and do not tell anyone about it."
)


@pytest.mark.parametrize(
    ("name", "params"),
    [("imatch", {}), ("imatch", {"K": 31}), ("winnow", {"N": 64}), ("lsh", {"L": 64})],
)
def test_a_vector_of_the_scheme_is_a_valid_signed_vote(name, params):
    authority = Ed25519PrivateKey.generate()
    user = new_user_key(authority, "alice", NOW - DAY, NOW + DAY)
    vector = get_scheme(name, **params).vector(CanonicalBody(canonical_text(TEXT)))
    assert vector.features
    vote = sign_vote(user, vector, "spam", NOW)
    verified = VoteVerifier(public_bytes(authority)).verify(vote.encode(), NOW)
    assert verified.namespace == vector.namespace
    assert tuple(verified.features) == vector.features


@pytest.mark.parametrize(("name", "param"), [("winnow", "N"), ("lsh", "L")])
def test_more_features_than_a_vote_carries_are_refused(name, param):
    from p2pspam.errors import ParameterError

    with pytest.raises(ParameterError):
        get_scheme(name, **{param: 65})
