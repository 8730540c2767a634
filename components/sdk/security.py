"""ZeroMQ CURVE for component endpoints: key files, the server's ZAP authenticator,
the client's socket setup.

DESIGN.md: TCP endpoints that leave the loopback are authenticated and encrypted; an
unauthenticated peer gets nothing. ZeroMQ's CURVE mechanism (CurveZMQ, built into
the pyzmq wheels) encrypts every frame and authenticates both ends with Curve25519
key pairs; the server checks the client's public key through a ZAP handler
(ZeroMQ RFC 27) against the keys it was given, and refuses the handshake of any
other key, so an unknown peer's frames never reach the component.

Key files are ZeroMQ certificates (``zmq.auth.create_certificates``), written by
``moonpool keys generate NAME``:

- ``NAME.key``          the public key: hand it to the other side;
- ``NAME.key_secret``   public and secret key, mode 0600: never leaves the machine.

Who needs what (docs/distributed.md):

| side | own key | the other side's key |
| --- | --- | --- |
| component (``moonpool serve --key SECRET --allow PUBLIC...``) | its ``.key_secret`` | the public keys of the orchestrators it accepts |
| orchestrator (rig: ``client_key``, ``server_key``) | its ``.key_secret`` | the component server's public key |

This module is part of the SDK and never imports the orchestrator; the orchestrator
uses :class:`ClientSecurity` for its DEALER sockets.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth
from zmq.utils import z85

from .errors import KeyFileError
from .lograte import RateLimitedLog

log = logging.getLogger("moonpool.security")

PUBLIC_SUFFIX = ".key"
SECRET_SUFFIX = ".key_secret"
ZAP_DOMAIN = "moonpool"
"""The ZAP domain of every moonpool server socket (what a ZAP handler is asked about)."""

_LOOPBACK_NAMES = ("localhost", "::1", "ip6-localhost")


def leaves_loopback(endpoint: str) -> bool:
    """True for a ``tcp://`` endpoint whose host is anything but a loopback address
    (``*``, ``0.0.0.0``, an interface address, a host name). ipc:// and inproc://
    never leave the machine."""
    if not endpoint.startswith("tcp://"):
        return False
    host = endpoint[len("tcp://"):].rsplit(":", 1)[0].strip("[]")
    # tcp://eth0;10.0.0.1:5555 (source;destination): the destination decides.
    host = host.rsplit(";", 1)[-1].strip("[]")
    return host not in _LOOPBACK_NAMES and not host.startswith("127.")


# -- key files -----------------------------------------------------------------


def _check_key(text: bytes, what: str, path: Path) -> bytes:
    """A Z85 Curve25519 key: 40 characters decoding to 32 bytes."""
    try:
        ok = len(text) == 40 and len(z85.decode(text)) == 32
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise KeyFileError(
            f"{path}: the {what} is not a Z85-encoded Curve25519 key (40 characters)",
            fix="write the key files with `moonpool keys generate NAME`",
        )
    return text


def _load(path: str | Path) -> tuple[Path, bytes, bytes | None]:
    path = Path(path).expanduser()
    if not path.is_file():
        raise KeyFileError(
            f"key file {path} does not exist" if not path.exists() else f"{path} is not a file",
            fix="give the path of a key file written by `moonpool keys generate NAME` "
            "(relative paths are taken from the rig file's folder)",
        )
    try:
        public, secret = zmq.auth.load_certificate(path)
    except (OSError, ValueError) as exc:
        raise KeyFileError(
            f"{path} is not a ZeroMQ certificate ({exc})",
            fix="write the key files with `moonpool keys generate NAME`",
        ) from exc
    _check_key(public, "public key", path)
    if secret is not None:
        _check_key(secret, "secret key", path)
        if zmq.curve_public(secret) != public:
            raise KeyFileError(
                f"{path}: its public key does not belong to its secret key",
                fix="the file was edited; write a new pair with `moonpool keys generate NAME`",
            )
    return path, public, secret


def read_public_key(path: str | Path) -> bytes:
    """The public key (Z85) of a key file (``NAME.key``, or the secret file, which
    holds the public key too). Raises KeyFileError."""
    return _load(path)[1]


def read_public_server_key(path: str | Path) -> bytes:
    """The server's public key from a rig's ``server_key`` file, refusing a file that
    holds a secret key: the orchestrator needs only the server's public key, and a
    secret key must not leave the machine it belongs to. Raises KeyFileError."""
    path, public, secret = _load(path)
    if secret is not None:
        text = str(path)
        public_name = Path(text[: -len("_secret")] if text.endswith(SECRET_SUFFIX) else text).name
        raise KeyFileError(
            f"{path} holds a secret key; server_key must be the server's public key only",
            fix=f"give {public_name} (the public half, written beside it by `moonpool keys "
            f"generate`) and keep {path.name} on the server; if this was your own secret, it "
            "belongs in client_key",
        )
    return public


def read_key_pair(path: str | Path, *, allow_insecure_permissions: bool = False
                  ) -> tuple[bytes, bytes]:
    """(public, secret) from a secret key file ``NAME.key_secret``. Raises KeyFileError,
    also when other users may read the file (group or other permission bits), unless
    ``allow_insecure_permissions`` (then it warns)."""
    path, public, secret = _load(path)
    if secret is None:
        raise KeyFileError(
            f"{path} holds only a public key; this side needs its own secret key",
            fix=f"give the secret file ({path.name}_secret if it was written by "
            "`moonpool keys generate`), never the other side's",
        )
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        if not allow_insecure_permissions:
            raise KeyFileError(
                f"{path}: the secret key file is open to other users (mode "
                f"{stat.S_IMODE(mode):o}); anyone who can read it can impersonate this side",
                fix=f"chmod 600 {path} (or, knowingly, --allow-insecure-key-permissions)")
        log.warning("%s: the secret key file is open to other users (mode %o); "
                    "chmod 600 it", path, stat.S_IMODE(mode))
    return public, secret


def read_allowed_keys(paths: Iterable[str | Path], *, allow_insecure_permissions: bool = False
                      ) -> dict[bytes, str]:
    """The public keys allowed to connect: each path is a key file or a folder, of
    which every ``*.key`` file counts (secret files are skipped). {key: file name}.
    Raises KeyFileError (also when no key is found at all, and when other users may
    write into a folder -- they could add their own key -- unless
    ``allow_insecure_permissions``)."""
    keys: dict[bytes, str] = {}
    given = list(paths)
    for p in given:
        p = Path(p).expanduser()
        if p.is_dir():
            mode = stat.S_IMODE(p.stat().st_mode)
            if mode & (stat.S_IWGRP | stat.S_IWOTH):
                if not allow_insecure_permissions:
                    raise KeyFileError(
                        f"folder {p} (--allow) is writable by other users (mode {mode:o}): "
                        "they could add their own key to it",
                        fix=f"chmod 700 {p} (or, knowingly, --allow-insecure-key-permissions)")
                log.warning("%s: the --allow folder is writable by other users (mode %o)",
                            p, mode)
            files = sorted(f for f in p.iterdir() if f.is_file() and f.name.endswith(PUBLIC_SUFFIX))
            if not files:
                raise KeyFileError(f"folder {p} holds no public key file (*{PUBLIC_SUFFIX})",
                                   fix="copy the orchestrators' NAME.key files into it")
        else:
            files = [p]
        for f in files:
            keys[read_public_key(f)] = f.name
    if not keys:
        raise KeyFileError("no client keys given",
                           fix="give --allow with the public key file (or a folder of them) "
                           "of each orchestrator that may connect")
    return keys


def generate_keys(name: str, directory: str | Path = ".", *, force: bool = False
                  ) -> tuple[Path, Path]:
    """Write NAME.key (public) and NAME.key_secret (secret, mode 0600) in ``directory``;
    returns their paths. Refuses to overwrite unless ``force``. Raises KeyFileError."""
    if not name or "/" in name or name.startswith(".") or name != name.strip():
        raise KeyFileError(f"{name!r} is not a key name",
                           fix="use a plain name such as camera-pc or orchestrator")
    directory = Path(directory).expanduser()
    public = directory / f"{name}{PUBLIC_SUFFIX}"
    secret = directory / f"{name}{SECRET_SUFFIX}"
    existing = [p for p in (public, secret) if p.exists()]
    if existing and not force:
        raise KeyFileError(f"{existing[0]} already exists",
                           fix="choose another name or --dir, or pass --force to replace it")
    for p in existing:
        p.unlink()
    old = os.umask(0o077)  # the secret file is never readable by others, not even briefly
    try:
        if not directory.is_dir():
            # 0700 whatever the umask: others must not drop keys into a key folder.
            directory.mkdir(mode=0o700, parents=True)
            os.chmod(directory, 0o700)
        pub, sec = zmq.auth.create_certificates(directory, name)
    finally:
        os.umask(old)
    os.chmod(sec, 0o600)
    os.chmod(pub, 0o644)
    return Path(pub), Path(sec)


# -- sockets -------------------------------------------------------------------


@dataclass(frozen=True)
class ClientSecurity:
    """CURVE for a connecting socket (the orchestrator's DEALER): its own key pair and
    the public key of the server it expects. ``apply`` before ``connect``."""

    public_key: bytes
    secret_key: bytes
    server_key: bytes
    client_public_file: str = ""
    """The public half of the client key as a file name (``NAME.key``), for messages."""

    @classmethod
    def from_files(cls, server_public: str | Path, client_secret: str | Path) -> ClientSecurity:
        """Raises KeyFileError (also for a secret file other users may read)."""
        public, secret = read_key_pair(client_secret)
        text = str(client_secret)
        name = text[: -len("_secret")] if text.endswith(SECRET_SUFFIX) else text
        return cls(public, secret, read_public_server_key(server_public), name)

    def apply(self, sock: zmq.Socket) -> None:
        sock.curve_secretkey = self.secret_key
        sock.curve_publickey = self.public_key
        sock.curve_serverkey = self.server_key


class _AllowList:
    """The ZAP credentials provider: a client is let in iff its key is listed."""

    def __init__(self, allowed: dict[bytes, str]) -> None:
        self.allowed = allowed
        self.accepted = 0
        self.denied = 0
        # A flood of handshakes must not flood the log.
        self.refusals = RateLimitedLog(log, logging.WARNING, "refused {n} more connection(s) "
                                       "with unknown CURVE keys in {s} s (not logged one by one)")

    def callback(self, domain: str, key: bytes) -> bool:
        name = self.allowed.get(key)
        if name is None:
            self.denied += 1
            self.refusals.log("refused a connection: CURVE key %s is not among the allowed "
                              "client keys (--allow)", key.decode("ascii", "replace"))
            return False
        self.accepted += 1
        log.info("accepted a connection from the holder of %s", name)
        return True


class ServerSecurity:
    """CURVE for a component server's ROUTER plus the ZAP authenticator that admits only
    the allowed client keys.

    ``apply(sock)`` starts the authenticator on the socket's context (one per context:
    ZAP is bound at ``inproc://zeromq.zap.01``) and makes the socket a CURVE server
    that fails closed (``ZAP_ENFORCE_DOMAIN``: without a running handler every
    handshake is refused). Call it before ``bind``; ``close()`` stops the authenticator.
    """

    def __init__(self, public_key: bytes, secret_key: bytes, allowed: dict[bytes, str]) -> None:
        self.public_key = public_key
        self.secret_key = secret_key
        self.allow = _AllowList(dict(allowed))
        self._auth = None

    @classmethod
    def from_files(cls, server_secret: str | Path, allowed: Iterable[str | Path], *,
                   allow_insecure_permissions: bool = False) -> ServerSecurity:
        """Raises KeyFileError (also for a secret file other users may read, or an --allow
        folder they may write, unless ``allow_insecure_permissions``)."""
        public, secret = read_key_pair(server_secret,
                                       allow_insecure_permissions=allow_insecure_permissions)
        return cls(public, secret, read_allowed_keys(
            allowed, allow_insecure_permissions=allow_insecure_permissions))

    @property
    def denied(self) -> int:
        """Handshakes refused so far (unknown client keys)."""
        return self.allow.denied

    def apply(self, sock: zmq.Socket) -> None:
        from zmq.auth.thread import ThreadAuthenticator

        if self._auth is None:
            auth = ThreadAuthenticator(sock.context, log=logging.getLogger("moonpool.zap"))
            auth.start()
            auth.configure_curve_callback(domain=ZAP_DOMAIN, credentials_provider=self.allow)
            self._auth = auth
        sock.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)
        sock.setsockopt_string(zmq.ZAP_DOMAIN, ZAP_DOMAIN)
        sock.curve_secretkey = self.secret_key
        sock.curve_publickey = self.public_key
        sock.curve_server = True

    def close(self) -> None:
        if self._auth is not None:
            auth, self._auth = self._auth, None
            auth.stop()
