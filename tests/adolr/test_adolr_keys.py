"""DHT keys of features and objects."""

import hashlib

import pytest

from p2pspam.adolr.keys import feature_key, object_key
from p2pspam.errors import ParameterError


def test_feature_key_follows_the_documented_formula():
    expected = hashlib.sha256(
        b"p2pspam/feature\0" + b"ata/1/L=50" + b"\0" + (0x0123456789ABCDEF).to_bytes(8, "big")
    ).digest()[:20]
    assert feature_key("ata/1/L=50", 0x0123456789ABCDEF) == expected


def test_feature_key_depends_on_the_namespace():
    assert feature_key("ata/1/L=50", 7) != feature_key("ata/1/L=40", 7)


def test_feature_key_accepts_the_whole_uint64_range():
    assert len(feature_key("ns", 0)) == 20
    assert len(feature_key("ns", 2**64 - 1)) == 20


@pytest.mark.parametrize("feature", [-1, 2**64, True, 1.0, "1"])
def test_feature_key_rejects_a_value_outside_uint64(feature):
    with pytest.raises(ParameterError, match="feature"):
        feature_key("ns", feature)


@pytest.mark.parametrize("namespace", ["", "a\0b", "x" * 129, 5])
def test_feature_key_rejects_a_bad_namespace(namespace):
    with pytest.raises(ParameterError, match="namespace"):
        feature_key(namespace, 1)


def test_object_key_is_the_guid():
    assert object_key(b"\x01" * 20) == b"\x01" * 20


def test_object_key_rejects_a_guid_of_the_wrong_size():
    with pytest.raises(ParameterError, match="20 bytes"):
        object_key(b"\x01" * 19)
