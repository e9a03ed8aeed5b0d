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
ssl = yes
ssl_cert = <{root}/cert.pem
ssl_key = <{root}/key.pem
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
    address = 127.0.0.1
    port = {tls_port}
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
    port: int  # plain IMAP, STARTTLS offered
    tls_port: int  # IMAPS
    users: tuple[str, ...]
    root: Path
    password: str = PASSWORD

    @property
    def cafile(self) -> Path:
        """The self-signed certificate the server presents (trust it to verify)."""
        return self.root / "cert.pem"

    def password_file(self, directory: Path) -> Path:
        """Write the users' password to a file (for ``agent imap --password-file``)."""
        path = directory / "imap-password"
        path.write_text(self.password + "\n")
        return path

    def log(self) -> str:
        """Dovecot's log so far."""
        path = self.root / "dovecot.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _write_certificate(root: Path) -> None:
    """A self-signed certificate for 127.0.0.1 and its key (cert.pem, key.pem)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "p2pspam test IMAP")])
    now = datetime.datetime.now(datetime.UTC)
    alt = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    (root / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (root / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (root / "key.pem").chmod(0o600)


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
def running_dovecot(
    binary: str, users: int = 24, timeout: float = 20.0, extra: str = ""
) -> Iterator[Dovecot]:
    """Start Dovecot with ``users`` accounts (user01, ...) and stop it on exit; ``extra``
    is appended to its configuration."""
    # Not under pytest's tmp dir: Dovecot's unprivileged processes must traverse it.
    root = Path(tempfile.mkdtemp(prefix="p2pspam-dovecot-", dir="/tmp"))
    root.chmod(0o755)
    login_user, internal_user, uid, gid = _accounts()
    names = tuple(f"user{i:02d}" for i in range(1, users + 1))
    for sub in ("run", "state", "home"):
        (root / sub).mkdir()
    os.chown(root / "home", uid, gid)
    (root / "passwd").write_text("".join(f"{n}:{{PLAIN}}{PASSWORD}\n" for n in names))
    _write_certificate(root)
    port, tls_port = _free_port(), _free_port()
    conf = root / "dovecot.conf"
    conf.write_text(
        CONF.format(
            root=root,
            port=port,
            tls_port=tls_port,
            login_user=login_user,
            internal_user=internal_user,
            uid=uid,
            gid=gid,
        )
        + extra
    )
    process = subprocess.Popen(
        [binary, "-F", "-c", str(conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    server = Dovecot("127.0.0.1", port, tls_port, names, root)
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
