"""ATA features: definition, batch equivalence, invariances, locality, robustness."""

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pspam.errors import ParameterError
from p2pspam.fingerprint import canonical_body, canonical_text, get_scheme
from p2pspam.fingerprint.ata import (
    AtaScheme,
    ata_features,
    ata_features_batch,
    exact_features,
    window_checksums,
)
from p2pspam.fingerprint.reference import (
    reference_checksums,
    reference_features,
    reverse_bits64,
)

texts = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF), max_size=400)


@given(texts, st.integers(1, 60), st.integers(1, 12))
def test_features_equal_the_pure_python_reference(text, length, count):
    assert ata_features(text, length, count) == reference_features(text, length, count)


@given(st.lists(texts, max_size=30), st.integers(1, 60), st.integers(1, 12))
def test_batch_api_equals_one_call_per_text(batch, length, count):
    assert ata_features_batch(batch, length, count) == [
        ata_features(t, length, count) for t in batch
    ]


def test_batch_api_equals_one_call_per_text_on_many_long_texts():
    rng = random.Random(7)
    batch = ["".join(rng.choices("abcdef ", k=rng.randint(0, 20_000))) for _ in range(120)]
    assert ata_features_batch(batch) == [exact_features(t) for t in batch]


def test_window_checksums_equal_the_rolling_recurrence_across_chunks():
    text = "".join(random.Random(3).choices("xyz\u00e9\u4e00 ", k=200_000))
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    assert window_checksums(points, 50).tolist() == reference_checksums(text, 50)


@given(texts)
def test_features_are_deterministic(text):
    assert ata_features(text) == ata_features(text)


@given(st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=12), min_size=5))
def test_features_ignore_whitespace_and_case_differences(words):
    plain = " ".join(words)
    noisy = "\n  ".join(w.upper() if i % 2 else w for i, w in enumerate(words)) + "\t"
    assert ata_features(canonical_text(plain)) == ata_features(canonical_text(noisy))


@given(st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=12), min_size=5))
def test_features_ignore_an_html_wrapper(words):
    text = " ".join(words)
    plain = b"Content-Type: text/plain\n\n" + text.encode()
    html = b"Content-Type: text/html\n\n<html><body><p>" + text.encode() + b"</p></body></html>"
    assert ata_features(canonical_body(plain).text) == ata_features(canonical_body(html).text)


@given(
    st.text(alphabet="abcdefghijklmnop ", min_size=60, max_size=600),
    st.data(),
)
def test_features_that_change_come_from_windows_overlapping_the_edit(text, data):
    """Appendix A: after replacing d consecutive characters, every checksum outside the
    windows overlapping the edit is unchanged; so a feature appears only from such a
    window or by moving up when a higher feature left, and disappears only when its
    window overlapped the edit or a new, higher checksum displaced it."""
    length = 20
    width = data.draw(st.integers(1, 15))
    start = data.draw(st.integers(0, len(text) - width))
    replacement = data.draw(st.text(alphabet="qrstuvwxyz", min_size=width, max_size=width))
    edited = text[:start] + replacement + text[start + width :]
    before, after = reference_checksums(text, length), reference_checksums(edited, length)
    touched = range(max(0, start - length + 1), min(start + width, len(before)))
    untouched = [i for i in range(len(before)) if i not in touched]
    assert [before[i] for i in untouched] == [after[i] for i in untouched]
    old = {reverse_bits64(f) for f in ata_features(text, length)}
    new = {reverse_bits64(f) for f in ata_features(edited, length)}
    appeared, disappeared = new - old, old - new
    overlapping_after = {after[i] for i in touched}
    for checksum in appeared:
        assert checksum in overlapping_after or any(d > checksum for d in disappeared)
    overlapping_before = {before[i] for i in touched}
    for checksum in disappeared:
        assert checksum in overlapping_before or any(a > checksum for a in appeared)


def test_text_shorter_than_l_has_no_features_and_says_why():
    vector = AtaScheme().vector(canonical_body(b"short body"))
    assert vector.features == ()
    assert vector.note == "shorter than L=50 characters (10)"


def test_vector_carries_scheme_parameters_and_namespace():
    vector = get_scheme("ata", length=40, count=7).vector(canonical_body(b"x" * 10 + b"y" * 90))
    assert (vector.scheme, dict(vector.params), vector.namespace) == (
        "ata",
        {"L": 40, "N": 7},
        "ata/1/L=40",
    )


@pytest.mark.parametrize("params", [{"length": 0}, {"count": 0}, {"length": 5000}])
def test_out_of_range_parameters_are_refused(params):
    with pytest.raises(ParameterError):
        AtaScheme(**params)


def test_unknown_scheme_is_refused_with_the_known_names():
    with pytest.raises(ParameterError, match=r"known schemes: .*ata"):
        get_scheme("nope")


def _survival(size: int, trials: int, seed: int) -> list[int]:
    """How many of 10 features survive 10 consecutive changed characters (paper 6.1)."""
    rng = np.random.default_rng(seed)
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz ", dtype=np.uint8)
    originals, edited = [], []
    for _ in range(trials):
        text = alphabet[rng.integers(0, len(alphabet), size)].copy()
        originals.append(text.tobytes().decode())
        at = int(rng.integers(0, size - 10))
        text[at : at + 10] = alphabet[rng.integers(0, len(alphabet), 10)]
        edited.append(text.tobytes().decode())
    before, after = ata_features_batch(originals), ata_features_batch(edited)
    return [len(set(a) & set(b)) for a, b in zip(before, after, strict=True)]


def test_ten_changed_bytes_keep_eight_of_ten_features_for_1kb_texts_95_percent_of_the_time():
    kept = _survival(1024, 2000, seed=1)
    assert sum(k >= 8 for k in kept) / len(kept) >= 0.95


def test_ten_changed_bytes_keep_nine_of_ten_features_for_5kb_texts_98_percent_of_the_time():
    kept = _survival(5 * 1024, 2000, seed=2)
    assert sum(k >= 9 for k in kept) / len(kept) >= 0.98


@given(st.text(alphabet="abcdefghij \u00e9\u4e00", max_size=3000), st.integers(5, 60))
def test_single_message_pure_python_path_equals_the_numpy_path(text, length):
    from p2pspam.fingerprint.ata_scheme import single_features
    from p2pspam.fingerprint.reference import reference_features

    assert reference_features(text, length, 10) == ata_features(text, length, 10)
    assert single_features(text, length, 10) == ata_features(text, length, 10)


def test_fingerprinting_one_message_does_not_import_numpy():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from p2pspam.fingerprint.normalize import canonical_body\n"
        "from p2pspam.fingerprint.schemes import get_scheme\n"
        "body = ' '.join(f'word{i}' for i in range(300)).encode()\n"
        "v = get_scheme('ata').vectors([canonical_body(b'Subject: x\\n\\n' + body)])\n"
        "assert len(v[0].features) == 10\n"
        "print('numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
