"""User credentials and credential files."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from p2pspam.auth.codec import DecodeError
from p2pspam.auth.credentials import (
    decode_credential,
    issue_credential,
    load_user_key,
    public_bytes,
    write_user_key,
)
from p2pspam.errors import InputError, ParameterError

from .helpers import NOW, authority_key, user


@pytest.fixture
def authority():
    return authority_key()


def test_a_credential_decodes_to_itself(authority):
    credential = user(authority).credential
    assert decode_credential(credential.encode()) == credential


def test_a_credential_is_signed_by_its_authority_only(authority):
    credential = user(authority).credential
    assert credential.signed_by(authority.public_key())
    assert not credential.signed_by(authority_key().public_key())
    assert not replace(credential, user_id="mallory").signed_by(authority.public_key())


def test_a_credential_carries_the_authority_key_id(authority):
    from p2pspam.auth.credentials import key_id

    assert user(authority).credential.authority_key_id == key_id(public_bytes(authority))


def test_a_user_id_with_spaces_cannot_be_issued(authority):
    with pytest.raises(ParameterError, match="user id"):
        issue_credential(authority, "bad user", b"\x00" * 32, 0, 1)


def test_a_credential_expiring_before_it_starts_cannot_be_issued(authority):
    with pytest.raises(ParameterError, match="expire"):
        issue_credential(authority, "alice", b"\x00" * 32, 10, 5)


def test_a_credential_with_a_bad_user_id_does_not_decode(authority):
    forged = replace(user(authority).credential, user_id="has space")
    with pytest.raises(DecodeError):
        decode_credential(forged.encode())


def test_a_credential_file_is_private_and_loads_back(authority, tmp_path):
    key = user(authority)
    path = tmp_path / "alice.cred"
    write_user_key(path, key)
    assert os.stat(path).st_mode & 0o777 == 0o600
    loaded = load_user_key(path)
    assert loaded.credential == key.credential
    assert public_bytes(loaded.private_key) == key.credential.public_key


def test_a_credential_file_is_never_overwritten(authority, tmp_path):
    path = tmp_path / "alice.cred"
    write_user_key(path, user(authority))
    before = path.read_bytes()
    with pytest.raises(InputError, match="exists already"):
        write_user_key(path, user(authority))
    assert path.read_bytes() == before


def test_a_credential_file_readable_by_others_is_refused(authority, tmp_path):
    path = tmp_path / "alice.cred"
    write_user_key(path, user(authority))
    path.chmod(0o644)
    with pytest.raises(InputError, match="chmod 600"):
        load_user_key(path)


def test_a_missing_credential_file_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_user_key(tmp_path / "nobody.cred")


def test_a_credential_file_whose_key_does_not_match_is_refused(authority, tmp_path):
    alice, bob = user(authority, "alice"), user(authority, "bob")
    path = tmp_path / "mixed.cred"
    write_user_key(path, alice)
    doc = json.loads(path.read_text())
    other = tmp_path / "bob.cred"
    write_user_key(other, bob)
    doc["private_key"] = json.loads(other.read_text())["private_key"]
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="does not match"):
        load_user_key(path)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not json",
        b"[]",
        b'{"format": "something else"}',
        b'{"format": "p2pspam-user-credential/1", "credential": "!!", "private_key": ""}',
    ],
)
def test_a_malformed_credential_file_is_a_clear_error(tmp_path, content):
    path = tmp_path / "bad.cred"
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(InputError):
        load_user_key(path)


def test_timestamps_in_a_credential_are_bounded(authority):
    with pytest.raises(ParameterError):
        issue_credential(authority, "alice", b"\x00" * 32, 0, 1 << 60)
    assert user(authority, not_before_ms=0, not_after_ms=NOW).credential.valid_at(NOW)
