"""The line-block detector computes exactly the test vectors of
docs/schemes/lineblock.md, and the counter indexes follow from the document's text."""

import hashlib

from p2pspam.fingerprint.lineblock import BulkConfig, BulkDetector, block_indexes, text_blocks

from .specdoc import spec_vectors

SPEC = spec_vectors("lineblock")
CONFIG = SPEC["config"]
STEPS = [s for s in SPEC["sequence"] if "now_ms" in s]


def _indexes_from_text(block: str, k: int, size: int) -> list[int]:
    digest = hashlib.sha256(b"p2pspam/lineblock/1\0" + block.encode()).digest()
    a = int.from_bytes(digest[:8], "big")
    b = int.from_bytes(digest[8:16], "big") | 1
    return [((a + i * b) % 2**64) % size for i in range(k)]


def test_spec_has_a_sequence_of_at_least_four_messages():
    assert len(STEPS) >= 4


def test_blocks_match_spec_vectors():
    for step in STEPS:
        assert text_blocks(step["text"]) == step["blocks"]


def test_a_long_line_is_cut_into_blocks_of_at_most_100_words():
    long_line = next(s for s in SPEC["sequence"] if "blocks_words" in s)
    assert [len(b.split()) for b in text_blocks(long_line["text"])] == long_line["blocks_words"]


def test_indexes_match_spec_vectors_and_spec_text():
    for step in STEPS:
        got = block_indexes(step["blocks"], CONFIG["hashes"], CONFIG["size"]).tolist()
        assert got == step["indexes"]
        expected = [_indexes_from_text(b, CONFIG["hashes"], CONFIG["size"]) for b in step["blocks"]]
        assert got == expected


def test_match_percentages_of_the_sequence_match_spec_vectors():
    detector = BulkDetector(BulkConfig(**CONFIG))
    for step in STEPS:
        result = detector.observe_blocks(step["blocks"], step["now_ms"])
        assert (result.matched, result.percent, result.alert) == (
            step["matched"],
            step["percent"],
            step["alert"],
        )
