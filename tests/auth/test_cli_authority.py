"""``p2pspam authority``: init, issue, revoke, export, list, issue-peer, revoke-peer."""

from __future__ import annotations

import json
import os
import stat

import pytest

from p2pspam.auth.authority import load_authority_export
from p2pspam.auth.credentials import load_user_key
from p2pspam.auth.peers import load_peer_key, verify_peer_credential
from p2pspam.auth.revocation import decode_revocations
from p2pspam.auth.verify import VoteRejected, VoteVerifier
from p2pspam.cli import main

from .helpers import vote


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def authority_dir(tmp_path):
    directory = tmp_path / "authority"
    assert main(["authority", "init", "--dir", str(directory)]) == 0
    return directory


def test_init_creates_a_private_key_file(authority_dir):
    assert mode(authority_dir / "authority.key") == 0o600
    assert mode(authority_dir) == 0o700


def test_init_refuses_to_overwrite_an_authority(authority_dir, capsys):
    before = (authority_dir / "authority.key").read_bytes()
    assert main(["authority", "init", "--dir", str(authority_dir)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert (authority_dir / "authority.key").read_bytes() == before


def test_issue_writes_a_private_credential_file_that_loads(authority_dir, tmp_path):
    out = tmp_path / "alice.cred"
    assert (
        main(
            [
                "authority",
                "issue",
                "alice",
                "--dir",
                str(authority_dir),
                "--days",
                "3",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert mode(out) == 0o600
    key = load_user_key(out)
    assert key.user_id == "alice"
    days = (key.credential.not_after_ms - key.credential.not_before_ms) / 86_400_000
    assert days == 3


def test_issue_refuses_to_overwrite_a_credential_file(authority_dir, tmp_path, capsys):
    out = tmp_path / "alice.cred"
    out.write_text("precious")
    assert (
        main(["authority", "issue", "alice", "--dir", str(authority_dir), "--out", str(out)]) == 2
    )
    assert "exists already" in capsys.readouterr().err
    assert out.read_text() == "precious"


def test_issue_refuses_a_bad_user_id(authority_dir, tmp_path, capsys):
    out = tmp_path / "x.cred"
    assert (
        main(["authority", "issue", "bad user", "--dir", str(authority_dir), "--out", str(out)])
        == 2
    )
    assert "user id" in capsys.readouterr().err
    assert not out.exists()


def test_issue_without_an_authority_says_how_to_create_one(tmp_path, capsys):
    assert (
        main(
            [
                "authority",
                "issue",
                "alice",
                "--dir",
                str(tmp_path / "none"),
                "--out",
                str(tmp_path / "a.cred"),
            ]
        )
        == 2
    )
    assert "authority init" in capsys.readouterr().err


def test_a_key_file_readable_by_others_is_refused(authority_dir, tmp_path, capsys):
    (authority_dir / "authority.key").chmod(0o644)
    assert main(["authority", "list", "--dir", str(authority_dir)]) == 2
    err = capsys.readouterr().err
    assert "chmod 600" in err and err.count("\n") == 1


def test_revoking_an_unknown_user_is_an_error(authority_dir, capsys):
    assert main(["authority", "revoke", "nobody", "--dir", str(authority_dir)]) == 2
    assert "unknown user" in capsys.readouterr().err


def test_revoke_then_export_gives_peers_a_list_that_stops_the_user(authority_dir, tmp_path):
    cred = tmp_path / "alice.cred"
    main(["authority", "issue", "alice", "--dir", str(authority_dir), "--out", str(cred)])
    export = tmp_path / "authority.json"
    assert main(["authority", "export", "--dir", str(authority_dir), "--out", str(export)]) == 0
    before = load_authority_export(export)
    verifier = VoteVerifier(before.public_key, before.revocations)
    alice = load_user_key(cred)
    signed = vote(alice, timestamp_ms=alice.credential.not_before_ms + 1)
    now = alice.credential.not_before_ms + 2
    assert verifier.verify(signed.encode(), now).user_id == "alice"

    assert main(["authority", "revoke", "alice", "--dir", str(authority_dir)]) == 0
    main(["authority", "export", "--dir", str(authority_dir), "--out", str(export)])
    after = load_authority_export(export)
    assert (
        decode_revocations(after.revocations).sequence
        > decode_revocations(before.revocations).sequence
    )
    assert verifier.update_revocations(after.revocations, now)
    with pytest.raises(VoteRejected, match="revoked"):
        verifier.verify(signed.encode(), now)


def test_revoking_twice_is_an_error(authority_dir, tmp_path, capsys):
    main(
        [
            "authority",
            "issue",
            "bob",
            "--dir",
            str(authority_dir),
            "--out",
            str(tmp_path / "bob.cred"),
        ]
    )
    assert main(["authority", "revoke", "bob", "--dir", str(authority_dir)]) == 0
    assert main(["authority", "revoke", "bob", "--dir", str(authority_dir)]) == 2
    assert "already revoked" in capsys.readouterr().err


def test_a_revoked_user_cannot_be_issued_again(authority_dir, tmp_path, capsys):
    main(
        [
            "authority",
            "issue",
            "bob",
            "--dir",
            str(authority_dir),
            "--out",
            str(tmp_path / "bob.cred"),
        ]
    )
    main(["authority", "revoke", "bob", "--dir", str(authority_dir)])
    assert (
        main(
            [
                "authority",
                "issue",
                "bob",
                "--dir",
                str(authority_dir),
                "--out",
                str(tmp_path / "bob2.cred"),
            ]
        )
        == 2
    )
    assert "revoked" in capsys.readouterr().err


def test_export_to_stdout_is_the_authority_document(authority_dir, capsys):
    assert main(["authority", "export", "--dir", str(authority_dir)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "p2pspam-authority/1"
    assert set(doc) == {"format", "public_key", "key_id", "revocations"}


def test_list_shows_users_and_their_status(authority_dir, tmp_path, capsys):
    for name in ("alice", "bob"):
        main(
            [
                "authority",
                "issue",
                name,
                "--dir",
                str(authority_dir),
                "--out",
                str(tmp_path / f"{name}.cred"),
            ]
        )
    main(["authority", "revoke", "bob", "--dir", str(authority_dir)])
    capsys.readouterr()
    assert main(["authority", "list", "--dir", str(authority_dir)]) == 0
    out = capsys.readouterr().out
    assert "2 users" in out
    alice_line = next(line for line in out.splitlines() if "alice" in line)
    bob_line = next(line for line in out.splitlines() if "bob" in line)
    assert "active" in alice_line and "revoked" in bob_line


def test_issue_peer_writes_a_peer_credential_the_federation_accepts(authority_dir, tmp_path):
    out = tmp_path / "node1.peer"
    assert (
        main(["authority", "issue-peer", "node1", "--dir", str(authority_dir), "--out", str(out)])
        == 0
    )
    assert mode(out) == 0o600
    peer = load_peer_key(out)
    export = tmp_path / "authority.json"
    main(["authority", "export", "--dir", str(authority_dir), "--out", str(export)])
    info = load_authority_export(export)
    now = peer.credential.not_before_ms
    credential = verify_peer_credential(peer.credential.encode(), info.public_key, now)
    assert credential.node_name == "node1"


def test_revoke_peer_lists_its_node_id(authority_dir, tmp_path):
    out = tmp_path / "node1.peer"
    main(["authority", "issue-peer", "node1", "--dir", str(authority_dir), "--out", str(out)])
    assert main(["authority", "revoke-peer", "node1", "--dir", str(authority_dir)]) == 0
    export = tmp_path / "authority.json"
    main(["authority", "export", "--dir", str(authority_dir), "--out", str(export)])
    revocations = decode_revocations(load_authority_export(export).revocations)
    assert load_peer_key(out).node_id in revocations.nodes


def test_two_authority_sessions_at_once_lose_no_user_and_reuse_no_sequence(authority_dir):
    from p2pspam.auth.authority import Authority

    first, second = Authority.open(authority_dir), Authority.open(authority_dir)
    first.issue("alice", 1, 1_000)
    second.issue("bob", 1, 1_000)
    lists = [first.revoke("alice", 2_000), second.revoke("bob", 3_000)]
    assert [row["user_id"] for row in Authority.open(authority_dir).users()] == ["alice", "bob"]
    assert lists[1].sequence == lists[0].sequence + 1
    assert lists[1].users == {"alice", "bob"}


@pytest.mark.parametrize(
    "content",
    [
        b"{}",
        b'{"format": "p2pspam-authority/1", "public_key": "AAAA"}',
        b'{"format": "p2pspam-authority/1", "public_key": "'
        + b"A" * 43
        + b'=", "revocations": "AAAA"}',
    ],
)
def test_a_malformed_authority_file_is_a_clear_error(tmp_path, content):
    from p2pspam.errors import InputError

    path = tmp_path / "authority.json"
    path.write_bytes(content)
    with pytest.raises(InputError):
        load_authority_export(path)


def test_a_peer_started_without_an_authority_file_gets_a_clear_error(tmp_path):
    from p2pspam.errors import InputError

    with pytest.raises(InputError, match="does not exist"):
        load_authority_export(tmp_path / "missing.json")
