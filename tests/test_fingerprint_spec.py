"""The code computes exactly the test vectors of docs/fingerprint-spec.md."""

import base64
import json
import re
from pathlib import Path

import pytest

from p2pspam.fingerprint import canonical_body, canonical_text, guid_of
from p2pspam.fingerprint.ata import ata_features, ata_features_batch
from p2pspam.fingerprint.reference import reference_features

SPEC = Path(__file__).resolve().parent.parent / "docs" / "fingerprint-spec.md"


def _vectors() -> list[dict]:
    text = SPEC.read_text(encoding="utf-8")
    block = re.search(
        r"<!-- test-vectors:begin -->\s*```json\n(.*?)```\s*<!-- test-vectors:end -->",
        text,
        re.S,
    )
    assert block, "the spec has no test-vector block"
    return json.loads(block.group(1))


VECTORS = _vectors()


def test_spec_has_at_least_six_test_vectors():
    assert len(VECTORS) >= 6


def _canonical(vector: dict) -> tuple[str, str | None]:
    if "input_text" in vector:
        return canonical_text(vector["input_text"]), None
    body = canonical_body(base64.b64decode(vector["input_message_base64"]))
    return body.text, body.note


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_canonical_text_matches_spec_vector(vector):
    text, note = _canonical(vector)
    assert text == vector["canonical"]
    assert note == vector.get("note")


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_guid_matches_spec_vector(vector):
    assert guid_of(vector["canonical"]).hex() == vector["guid"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_features_match_spec_vector(vector):
    got = ata_features(vector["canonical"], vector["L"], vector["N"])
    assert [f"{f:016x}" for f in got] == vector["features"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_reference_implementation_matches_spec_vector(vector):
    got = reference_features(vector["canonical"], vector["L"], vector["N"])
    assert [f"{f:016x}" for f in got] == vector["features"]


def test_batch_api_matches_spec_vectors_with_default_parameters():
    default = [v for v in VECTORS if (v["L"], v["N"]) == (50, 10)]
    got = ata_features_batch([v["canonical"] for v in default])
    assert [[f"{f:016x}" for f in g] for g in got] == [v["features"] for v in default]
