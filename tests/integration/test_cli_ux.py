"""What a user meets at the command line (issue 22): --out into a folder that holds a
run, durations with units and 0 for --until, check taking --until/--seed as the docs
say, and docs that cite only files that exist."""

from __future__ import annotations

import json
import re

from conftest import RIGS, ROOT, moonpool

QUICK = str(RIGS / "quickstart.toml")


def test_out_into_a_used_folder_is_refused_and_nothing_is_touched(tmp_path):
    out = tmp_path / "run"
    assert moonpool("run", QUICK, "--until", "1", "--out", str(out), "--quiet").returncode == 0
    before = (out / "summary.json").read_text()
    proc = moonpool("run", QUICK, "--until", "2", "--out", str(out), "--quiet")
    assert proc.returncode == 2
    assert "already holds files" in proc.stderr and "--force" in proc.stderr
    assert (out / "summary.json").read_text() == before


def test_force_replaces_the_old_run_including_its_logs(tmp_path):
    out = tmp_path / "run"
    (out / "logs").mkdir(parents=True)
    (out / "logs" / "old-component.log").write_text("from an earlier run")
    (out / "plots").mkdir()
    (out / "plots" / "old.png").write_bytes(b"")
    (out / "summary.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    proc = moonpool("run", QUICK, "--until", "1", "--out", str(out), "--quiet", "--force",
                    "--mode", "process")
    assert proc.returncode == 0, proc.stderr
    assert not (out / "logs" / "old-component.log").exists()
    assert not (out / "plots" / "old.png").exists()
    assert sorted(p.name for p in (out / "logs").iterdir()) == ["pid.log", "sensor.log",
                                                                "vehicle.log"]
    assert json.loads((out / "summary.json").read_text())["sim_time_s"] == 1.0
    assert (out / "notes.txt").read_text() == "mine"  # not a run's output: left alone


def test_until_takes_durations_and_zero(tmp_path):
    proc = moonpool("run", QUICK, "--until", "1500ms", "--out", str(tmp_path / "a"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["sim_time_s"] == 1.5
    proc = moonpool("run", QUICK, "--until", "0", "--out", str(tmp_path / "b"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    s = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert s["status"] == "ok" and s["ticks"] == 0 and s["messages"] == 1  # the initial state
    # Nothing was stepped: no plots, and no "skipped" warnings about empty series.
    assert s["plots"] == [] and "skipped" not in proc.stderr, proc.stderr
    proc = moonpool("run", QUICK, "--until", "10 parsecs", "--out", str(tmp_path / "c"))
    assert proc.returncode == 2 and "--until" in proc.stderr and "unknown unit" in proc.stderr


def test_check_takes_until_and_seed_as_the_docs_say():
    proc = moonpool("check", QUICK, "--until", "10s", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    assert "until 10 s" in proc.stdout
    # every option of docs/rigs.md's override table is accepted by run and check
    text = (ROOT / "docs" / "rigs.md").read_text()
    section = text.split("\n## Command-line overrides\n", 1)[1].split("\n## ", 1)[0]
    options = re.findall(r"^\| `(--[a-z-]+)", section, flags=re.M)
    assert {"--set", "--until", "--seed", "--mode", "--realtime"} <= set(options)
    for command in ("run", "check"):
        usage = moonpool(command, "--help").stdout
        for option in options:
            assert option in usage, (command, option)


WRITTEN = {"report.md"}  # files moonpool writes (moonpool sweep report), not docs to cite


def test_docs_cite_only_files_that_exist():
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"(?<![\w/.-])([\w./-]+\.md)\b", text):
            name = m.group(1)
            if name.rpartition("/")[2] in WRITTEN:
                continue
            if not any(p.exists() for p in (doc.parent / name, ROOT / name, ROOT / "docs" / name)):
                missing.append(f"{doc.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}: "
                               f"{name}")
    assert missing == []


def test_seed_001_is_explained_where_it_is_first_met():
    readme = (ROOT / "README.md").read_text()
    assert "seed 001" not in readme  # the README names the paper instead
    tasks = (ROOT / "docs" / "tasks.md").read_text()
    first = tasks.index("seed 001")
    assert "FinsSim" in tasks[max(0, first - 200):first + 100]
