"""A real Dovecot IMAP server for tests: a temporary configuration with passwd-file
users, on a free loopback port, started with ``dovecot -F -c CONF`` and stopped after."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PASSWORD = "secret"

CONF = """\
protocols = imap
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = {login_user}
default_internal_user = {internal_user}
first_valid_uid = {uid}
first_valid_gid = {gid}
mail_location = maildir:~/Maildir
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}
namespace inbox {{
  inbox = yes
  separator = /
  mailbox Junk {{
    special_use = \\Junk
    auto = create
  }}
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service pop3-login {{
  inet_listener pop3 {{
    port = 0
  }}
}}
service submission-login {{
  inet_listener submission {{
    port = 0
  }}
}}
"""


@dataclass(frozen=True)
class Dovecot:
    """A running Dovecot: where it listens and the users it knows."""

    host: str
    port: int
    users: tuple[str, ...]
    root: Path
    password: str = PASSWORD

    def password_file(self, directory: Path) -> Path:
        """Write the users' password to a file (for ``agent imap --password-file``)."""
        path = directory / "imap-password"
        path.write_text(self.password + "\n")
        return path

    def log(self) -> str:
        """Dovecot's log so far."""
        path = self.root / "dovecot.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accounts() -> tuple[str, str, int, int]:
    """(login user, internal user, mail uid, mail gid) for this process's privileges."""
    if os.geteuid() != 0:
        me = pwd.getpwuid(os.geteuid()).pw_name
        return me, me, os.geteuid(), os.getegid()
    # As root, Dovecot refuses root for logins and mail: use its own system users.
    mail = pwd.getpwnam("dovecot")
    login = "dovenull" if _user_exists("dovenull") else "nobody"
    return login, "dovecot", mail.pw_uid, mail.pw_gid


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


@contextlib.contextmanager
def running_dovecot(binary: str, users: int = 24, timeout: float = 20.0) -> Iterator[Dovecot]:
    """Start Dovecot with ``users`` accounts (user01, ...) and stop it on exit."""
    # Not under pytest's tmp dir: Dovecot's unprivileged processes must traverse it.
    root = Path(tempfile.mkdtemp(prefix="p2pspam-dovecot-", dir="/tmp"))
    root.chmod(0o755)
    login_user, internal_user, uid, gid = _accounts()
    names = tuple(f"user{i:02d}" for i in range(1, users + 1))
    for sub in ("run", "state", "home"):
        (root / sub).mkdir()
    os.chown(root / "home", uid, gid)
    (root / "passwd").write_text("".join(f"{n}:{{PLAIN}}{PASSWORD}\n" for n in names))
    port = _free_port()
    conf = root / "dovecot.conf"
    conf.write_text(
        CONF.format(
            root=root,
            port=port,
            login_user=login_user,
            internal_user=internal_user,
            uid=uid,
            gid=gid,
        )
    )
    process = subprocess.Popen(
        [binary, "-F", "-c", str(conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    server = Dovecot("127.0.0.1", port, names, root)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                output = process.stdout.read().decode(errors="replace") if process.stdout else ""
                raise RuntimeError(f"dovecot exited: {output}\n{server.log()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                    if sock.recv(64).startswith(b"* OK"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"dovecot did not answer on port {port}\n{server.log()}")
            time.sleep(0.1)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        shutil.rmtree(root, ignore_errors=True)
