"""Subcommands contributed by component packages (moonpool.components.sdk.commands)."""

from __future__ import annotations

import importlib.metadata

from moonpool.components.sdk import commands
from moonpool.components.sdk.commands import Command, CommandGroup
from moonpool.orchestrator import cli

PING = Command("answer pong", lambda p: p.add_argument("--times", type=int, default=1),
               lambda args: print("pong " * args.times) or 0)
NOT_A_COMMAND = 42


def _fake_entry_points(monkeypatch, *entries):
    eps = [importlib.metadata.EntryPoint(name, value, commands.GROUP) for name, value in entries]
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        return eps if kw.get("group") == commands.GROUP else real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_the_shipped_commands_are_registered():
    found, problems = commands.registered_commands()
    assert problems == []
    assert {"localize", "dataset pool", "calibrate intrinsics", "calibrate water"} <= set(found)
    assert isinstance(found["dataset"], CommandGroup) and isinstance(found["localize"], Command)


def test_a_registered_command_runs_under_its_words(monkeypatch, capsys):
    _fake_entry_points(monkeypatch, ("tools", f"{__name__}:GROUP"), ("tools ping", f"{__name__}:PING"))
    assert cli.main(["tools", "ping", "--times", "2"]) == 0
    assert capsys.readouterr().out.strip() == "pong pong"


def test_a_broken_entry_is_named_and_the_rest_still_works(monkeypatch, capsys):
    _fake_entry_points(monkeypatch, ("ping", f"{__name__}:PING"),
                       ("gone", "moonpool.no_such_module:X"), ("odd", f"{__name__}:NOT_A_COMMAND"))
    found, problems = commands.registered_commands()
    assert list(found) == ["ping"]
    text = " ".join(str(p) for p in problems)
    assert "'gone'" in text and "'odd'" in text and "not a moonpool.components.sdk.commands.Command" in text
    assert cli.main(["ping"]) == 0
    err = capsys.readouterr().err
    assert "warning: cannot load the command 'gone'" in err


GROUP = CommandGroup("test tools")
