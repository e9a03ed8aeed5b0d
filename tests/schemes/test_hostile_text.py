"""Every related-work scheme takes any text without failing, and yields 64-bit features."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.fingerprint import canonical_body, canonical_text, get_scheme
from p2pspam.fingerprint.lineblock import BulkConfig, BulkDetector
from p2pspam.fingerprint.normalize import CanonicalBody
from p2pspam.fingerprint.winnow import fingerprints

SCHEMES = ["imatch", "winnow", "lsh"]


@pytest.mark.parametrize("name", SCHEMES)
@given(text=st.text(max_size=3000))
def test_any_text_gives_a_vector_of_64_bit_features_or_a_note(name, text):
    vector = get_scheme(name).vector(CanonicalBody(canonical_text(text)))
    assert all(isinstance(f, int) and 0 <= f < 2**64 for f in vector.features)
    assert vector.features or vector.note


@given(st.binary(max_size=4000))
def test_any_bytes_can_be_scored_for_bulk_and_deduplicated(raw):
    detector = BulkDetector(BulkConfig(size=1024, slots=2, slot_ms=1000))
    result = detector.observe_message(raw, 0)
    assert 0 <= result.percent <= 100
    assert isinstance(fingerprints(canonical_body(raw).text), frozenset)


def test_a_megabyte_of_one_word_is_handled():
    text = "spam " * 200_000
    for name in SCHEMES:
        assert get_scheme(name).vector(CanonicalBody(text)).guid
