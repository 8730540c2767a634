"""CURVE key files, `moonpool keys generate` and the refusals of `moonpool serve`
(docs/distributed.md)."""

from __future__ import annotations

import stat
import pytest
import zmq

from moonpool.components.sdk import security
from moonpool.components.sdk.errors import KeyFileError
from moonpool.components.sdk.serve import main as serve_main
from moonpool.orchestrator.cli import main as cli_main


def test_generate_writes_a_public_and_a_private_file(tmp_path):
    public, secret = security.generate_keys("camera-pc", tmp_path / "keys")
    assert (public.name, secret.name) == ("camera-pc.key", "camera-pc.key_secret")
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert "secret-key" not in public.read_text()
    pub, sec = security.read_key_pair(secret)
    assert security.read_public_key(public) == pub and zmq.curve_public(sec) == pub
    # The pyzmq certificate reader agrees (ZeroMQ's certificate format).
    assert zmq.auth.load_certificate(public) == (pub, None)
    with pytest.raises(KeyFileError, match="already exists.*--force"):
        security.generate_keys("camera-pc", tmp_path / "keys")
    public2, _ = security.generate_keys("camera-pc", tmp_path / "keys", force=True)
    assert security.read_public_key(public2) != pub
    with pytest.raises(KeyFileError, match="not a key name"):
        security.generate_keys("../x", tmp_path)


def test_bad_key_files_are_named_with_the_fix(tmp_path):
    pub, sec = security.generate_keys("k", tmp_path)
    with pytest.raises(KeyFileError, match="does not exist"):
        security.read_public_key(tmp_path / "nope.key")
    with pytest.raises(KeyFileError, match="holds only a public key"):
        security.read_key_pair(pub)
    (tmp_path / "junk.key").write_text("hello\n")
    with pytest.raises(KeyFileError, match="not a ZeroMQ certificate"):
        security.read_public_key(tmp_path / "junk.key")
    (tmp_path / "short.key").write_text('curve\n    public-key = "abc"\n')
    with pytest.raises(KeyFileError, match="not a Z85-encoded"):
        security.read_public_key(tmp_path / "short.key")
    other_pub, _ = zmq.curve_keypair()
    text = sec.read_text()
    (tmp_path / "mixed.key_secret").write_text(
        text.replace(security.read_public_key(pub).decode(), other_pub.decode()))
    with pytest.raises(KeyFileError, match="does not belong to its secret key"):
        security.read_key_pair(tmp_path / "mixed.key_secret")


def test_allowed_keys_from_files_and_folders(tmp_path):
    a, a_secret = security.generate_keys("a", tmp_path / "allowed")
    b, _ = security.generate_keys("b", tmp_path / "allowed")
    c, _ = security.generate_keys("c", tmp_path / "other")
    keys = security.read_allowed_keys([tmp_path / "allowed", c])
    assert sorted(keys.values()) == ["a.key", "b.key", "c.key"]  # secret files are skipped
    with pytest.raises(KeyFileError, match="does not exist"):
        security.read_allowed_keys([tmp_path / "x.key"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(KeyFileError, match="holds no public key file"):
        security.read_allowed_keys([tmp_path / "empty"])
    with pytest.raises(KeyFileError, match="no client keys"):
        security.read_allowed_keys([])


def test_cli_keys_generate(tmp_path, capsys):
    assert cli_main(["keys", "generate", "orchestrator", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "orchestrator.key (public key" in out and "mode 0600" in out
    assert cli_main(["keys", "generate", "orchestrator", "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err


@pytest.mark.parametrize("args,message", [
    (["--bind", "tcp://0.0.0.0:5999"], "refusing to serve it unauthenticated"),
    (["--bind", "tcp://*:5999"], "refusing to serve it unauthenticated"),
    (["--bind", "tcp://127.0.0.1:5999", "--key", "{k}/s.key_secret"], "--key needs --allow"),
    (["--bind", "tcp://127.0.0.1:5999", "--allow", "{k}/o.key"], "--allow needs --key"),
    (["--bind", "tcp://*:5999", "--insecure", "--key", "{k}/s.key_secret", "--allow", "{k}/o.key"],
     "--insecure contradicts"),
    (["--bind", "tcp://*:5999", "--key", "{k}/o.key", "--allow", "{k}/o.key"],
     "holds only a public key"),
])
def test_serve_refuses_unsafe_or_inconsistent_setups(tmp_path, capsys, args, message):
    security.generate_keys("s", tmp_path)
    security.generate_keys("o", tmp_path)
    argv = ["quickstart.pressure", *[a.format(k=tmp_path) for a in args]]
    assert serve_main(argv) == 2
    assert message in capsys.readouterr().err


def test_key_folders_are_0700_whatever_the_umask(tmp_path):
    """Issue 24, point 14: under umask 000 a new key folder was 0777."""
    import os
    import stat

    old = os.umask(0)
    try:
        security.generate_keys("a", tmp_path / "new" / "keys")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new" / "keys").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700


def test_secret_key_readable_by_others_is_refused(tmp_path):
    import os

    _, sec = security.generate_keys("a", tmp_path)
    os.chmod(sec, 0o644)
    with pytest.raises(KeyFileError, match="open to other users") as err:
        security.read_key_pair(sec)
    assert "chmod 600" in err.value.fix
    assert security.read_key_pair(sec, allow_insecure_permissions=True)[1]
    os.chmod(sec, 0o600)
    assert security.read_key_pair(sec)[1]


def test_allow_folder_writable_by_others_is_refused(tmp_path):
    import os

    pub, sec = security.generate_keys("a", tmp_path / "allowed")
    os.chmod(tmp_path / "allowed", 0o777)
    with pytest.raises(KeyFileError, match="writable by other users"):
        security.read_allowed_keys([tmp_path / "allowed"])
    assert security.read_allowed_keys([tmp_path / "allowed"], allow_insecure_permissions=True)
    s = security.ServerSecurity.from_files(sec, [tmp_path / "allowed"],
                                           allow_insecure_permissions=True)
    assert s.allow.allowed


def test_serve_refuses_an_open_secret_key(tmp_path, capsys):
    import os

    from moonpool.components.sdk import serve

    pub, sec = security.generate_keys("server", tmp_path)
    os.chmod(sec, 0o640)
    code = serve.main(["sources.constant_wrench", "--bind", "tcp://127.0.0.1:0",
                       "--key", str(sec), "--allow", str(pub)])
    assert code == 2 and "open to other users" in capsys.readouterr().err


def test_refused_handshakes_are_rate_limited_in_the_log(caplog):
    """Issue 24, point 12: one WARNING per refused handshake flooded the log."""
    import logging

    allow = security._AllowList({b"k" * 40: "admin.key"})
    with caplog.at_level(logging.WARNING, logger="moonpool.security"):
        for i in range(1000):
            assert not allow.callback("moonpool", b"%040d" % i)
    lines = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert allow.denied == 1000
    assert len(lines) <= allow.refusals.burst + 1, len(lines)
    assert "counted, not logged" in lines[-1].getMessage()
    allow.refusals._window_start -= allow.refusals.window_s  # the window ends: count told
    with caplog.at_level(logging.WARNING, logger="moonpool.security"):
        allow.callback("moonpool", b"x" * 40)
    assert "refused 995 more connection(s)" in caplog.records[-2].getMessage()


def test_log_lines_escape_newlines_and_control_characters():
    import logging

    from moonpool.components.sdk.errors import printable
    from moonpool.components.sdk.serve import EscapingFilter

    forged = "c\n[x INFO] accepted a connection from the holder of admin.key\x1b]0;pwn\x07"
    assert printable(forged) == ("c\\n[x INFO] accepted a connection from the holder of "
                                 "admin.key\\x1b]0;pwn\\x07")
    record = logging.LogRecord("moonpool.serve", logging.INFO, __file__, 1,
                               "%s: session ended (%s)", (forged, "terminated"), None)
    assert EscapingFilter().filter(record)
    text = logging.Formatter("[%(levelname)s] %(message)s").format(record)
    assert "\n" not in text and "\x1b" not in text and text.endswith("(terminated)")
