"""The I-Match code computes exactly the test vectors of docs/schemes/imatch.md, and the
signatures and lexicon drops follow from the document's text alone."""

import hashlib
import re

import pytest

from p2pspam.fingerprint import canonical_text
from p2pspam.fingerprint.imatch import imatch_features, select_terms
from p2pspam.fingerprint.lexicon import document_terms, lexicons

from .specdoc import spec_text, spec_vectors

VECTORS = spec_vectors("imatch")
IDS = [v["name"] for v in VECTORS]
P_PCT = 33
SEED = 1


def _signature_from_text(k: int, terms: list[str]) -> str:
    data = b"p2pspam/imatch/1\0" + bytes([k]) + b"\0" + "\n".join(sorted(terms)).encode()
    return hashlib.sha256(data).digest()[:8].hex()


def _dropped_from_text(term: str, k: int) -> bool:
    digest = hashlib.sha512(f"p2pspam/imatch/drop\0{SEED}\0{term}".encode()).digest()
    return int.from_bytes(digest[2 * k : 2 * k + 2], "big") < round(P_PCT * 65536 / 100)


def test_spec_has_at_least_five_test_vectors():
    assert len(VECTORS) >= 5


def test_lexicon_digest_is_the_one_the_spec_names():
    named = re.search(r"it is \*\*`([0-9a-f]{16})`\*\*", spec_text("imatch"))
    assert named and lexicons().digest == named.group(1)


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_canonical_text_and_terms_match_spec_vector(vector):
    assert canonical_text(vector["input_text"]) == vector["canonical"]
    assert sorted(document_terms(vector["canonical"])) == vector["terms"]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_lexicon_term_sets_match_spec_vector(vector):
    got = select_terms(vector["canonical"])
    assert [list(s.terms) for s in got] == [lex["terms"] for lex in vector["lexicons"]]
    assert [s.rejected for s in got] == [lex["rejected"] for lex in vector["lexicons"]]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_features_match_spec_vector(vector):
    features, note = imatch_features(vector["canonical"])
    assert [f"{f:016x}" for f in features] == vector["features"]
    assert note == vector["note"]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_signatures_follow_from_the_spec_text(vector):
    for lex in vector["lexicons"]:
        if lex["rejected"] is None:
            assert _signature_from_text(lex["k"], lex["terms"]) == lex["signature"]
    accepted = [lex["signature"] for lex in vector["lexicons"] if lex["rejected"] is None]
    assert accepted == vector["features"]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_auxiliary_lexicons_drop_terms_as_the_spec_says(vector):
    primary = lexicons().primary
    base = {t for t in vector["lexicons"][0]["terms"] if t in primary}
    for lex in vector["lexicons"][1:]:
        chosen_primary = {t for t in lex["terms"] if t in primary}
        assert chosen_primary == {t for t in base if not _dropped_from_text(t, lex["k"])}
