"""The optional outcome cache (--cache-dir): never changes a report, never trusted blindly."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reviewer.engine.registry import discover

from gitrepo import sample_repo
from reviewer.engine import cache as cache_mod
from reviewer import review
from reviewer.engine import run as engine
from reviewer.engine.cache import OutcomeCache, outcome_data
from reviewer.cli import main
from reviewer.report.model import Finding, InvariantStatus, Location, Severity
from reviewer.engine.api import Outcome

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    git_dir, base, patches = sample_repo(tmp_path_factory.mktemp("sample"))
    return git_dir, base, patches["v5"]


def _review(sample, capsys, *extra: str) -> tuple[int, str]:
    git_dir, base, patch = sample
    code = main(["review", "--repo", str(git_dir), "--base", base, "--patch", str(patch), "--no-state",
                 "--format", "markdown", *extra])
    return code, capsys.readouterr().out


def _entries(root: Path) -> list[Path]:
    return sorted(root.glob("outcomes/*/*.json"))


@pytest.fixture(scope="module")
def errored(sample) -> set[str]:
    """Families whose outcome is an error are never cached (an error may be transient)."""
    git_dir, base, patch = sample
    report = review.run(review.Request(repo=str(git_dir), base=base, patch=str(patch))).report
    return {inv.id for inv in report.invariants if inv.status is InvariantStatus.ERROR}


def _families_run(monkeypatch) -> list[str]:
    ran: list[str] = []
    real = engine.ReviewContext

    def counting(changeset, base, patched, family, *rest):
        ran.append(family.id)
        return real(changeset, base, patched, family, *rest)

    monkeypatch.setattr(engine, "ReviewContext", counting)
    return ran


def test_cold_and_warm_reports_are_byte_identical_and_warm_runs_no_rule(
    sample, errored, capsys, tmp_path, monkeypatch
) -> None:
    reference = _review(sample, capsys)
    assert reference[0] == 1 and reference[1].endswith("\nDO-NOT-MERGE\n")  # v5: a real review ran
    cold = _review(sample, capsys, "--cache-dir", str(tmp_path))
    assert cold == reference
    assert len(_entries(tmp_path)) == len(discover()) - len(errored)  # one per family
    ran = _families_run(monkeypatch)
    warm = _review(sample, capsys, "--cache-dir", str(tmp_path))
    assert warm == reference
    assert set(ran) == errored


def test_environment_variable_enables_the_cache(sample, errored, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("REVIEWER_CACHE_DIR", str(tmp_path))
    reference = _review(sample, capsys)
    assert _entries(tmp_path)
    ran = _families_run(monkeypatch)
    assert _review(sample, capsys) == reference
    assert set(ran) == errored


def _rewrite(entry: Path, mutate) -> None:
    data = json.loads(entry.read_text())
    mutate(data)
    entry.write_text(json.dumps(data))


def _with_valid_checksum(mutate):
    """A forgery that passes the checksum: only the structural checks can catch it."""

    def apply(data):
        mutate(data["outcome"])
        data["checksum"] = cache_mod._checksum(data["outcome"])

    return apply


def _line_as_string(outcome) -> None:
    finding = next(f for f in outcome["findings"] if f["location"])
    finding["location"]["line"] = str(finding["location"]["line"])


CORRUPTIONS = {
    "truncated": lambda e: e.write_bytes(e.read_bytes()[: len(e.read_bytes()) // 2]),
    "not json": lambda e: e.write_bytes(b"\x00\xffgarbage"),
    "empty": lambda e: e.write_bytes(b""),
    "wrong checksum": lambda e: _rewrite(e, lambda d: d["outcome"].update(summary="forged")),
    "wrong key": lambda e: _rewrite(e, lambda d: d.update(key="0" * 64)),
    "wrong schema": lambda e: _rewrite(e, lambda d: d.update(schema="reviewer-cache/0")),
    "unknown status": lambda e: _rewrite(e, _with_valid_checksum(lambda o: o.update(status="fine"))),
    "line as string": lambda e: _rewrite(e, _with_valid_checksum(_line_as_string)),
    "extra field": lambda e: _rewrite(e, _with_valid_checksum(lambda o: o.update(verdict="MERGE"))),
    "findings dropped": lambda e: _rewrite(e, _with_valid_checksum(lambda o: o.update(findings={}))),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_corrupt_entry_is_ignored_logged_and_replaced(sample, capsys, tmp_path, caplog, kind) -> None:
    reference = _review(sample, capsys, "--cache-dir", str(tmp_path))
    # The lease-renewal entry holds findings, so forgeries of findings apply to it.
    entries = _entries(tmp_path)
    with_findings = [e for e in entries if json.loads(e.read_text())["outcome"]["findings"]]
    for entry in with_findings:
        CORRUPTIONS[kind](entry)
    with caplog.at_level(logging.DEBUG, logger="reviewer.engine.cache"):
        again = _review(sample, capsys, "--cache-dir", str(tmp_path))
    assert again == reference
    assert any("ignored" in r.getMessage() for r in caplog.records if r.name == "reviewer.engine.cache")
    # Rewritten with a good entry: the next run hits it.
    for entry in with_findings:
        assert json.loads(entry.read_text())["checksum"] == cache_mod._checksum(json.loads(entry.read_text())["outcome"])


def test_deleting_the_cache_midway_is_harmless(sample, capsys, tmp_path, monkeypatch) -> None:
    reference = _review(sample, capsys)
    original = OutcomeCache.store

    def store_after_delete(self, key, outcome):
        shutil.rmtree(self.root, ignore_errors=True)
        original(self, key, outcome)
        shutil.rmtree(self.root, ignore_errors=True)

    monkeypatch.setattr(OutcomeCache, "store", store_after_delete)
    assert _review(sample, capsys, "--cache-dir", str(tmp_path / "c")) == reference
    monkeypatch.setattr(OutcomeCache, "store", original)
    # An unwritable cache location only costs time.
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert _review(sample, capsys, "--cache-dir", str(blocker)) == reference


def test_concurrent_runs_share_a_cache_safely(sample, tmp_path) -> None:
    git_dir, base, patch = sample
    cmd = [sys.executable, "-m", "reviewer", "review", "--repo", str(git_dir), "--base", base, "--patch", str(patch),
           "--no-state", "--cache-dir", str(tmp_path / "shared")]
    env = {**os.environ}
    reference = subprocess.run(cmd[:-2], capture_output=True, env=env).stdout
    for _ in range(2):  # cold (all writing), then warm (all reading)
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(3)]
        outputs = [p.communicate()[0] for p in procs]
        assert [p.returncode for p in procs] == [1, 1, 1]
        assert all(out == reference for out in outputs)
    entries = _entries(tmp_path / "shared")
    assert entries
    assert not list((tmp_path / "shared").rglob(".tmp-*"))
    store = OutcomeCache(tmp_path / "shared")
    for entry in entries:
        key = entry.parent.name + entry.stem
        assert store.load(key) is not None


def test_outcomes_round_trip_exactly(tmp_path) -> None:
    finding = Finding(
        rule="lease-renewal/x", severity=Severity.SHOULD_FIX, title="t \udcff", message="m `code`",
        location=Location("a/b.ts", 3, 5, "note"), related=(Location("c.ts", 1, 1),),
        failure_sequence=("one", "two"), anchor="anchor",
    )
    outcome = Outcome("summary", (finding,), examined=1)
    store = OutcomeCache(tmp_path)
    store.store("ab" * 32, outcome)
    loaded = store.load("ab" * 32)
    assert loaded == outcome
    assert loaded.findings[0].id == finding.id
    assert outcome_data(loaded) == outcome_data(outcome)
    assert store.load("cd" * 32) is None


def test_keys_change_with_everything_that_can_change_an_outcome() -> None:
    base = dict(family_id="f", options={"a": [1, 2]}, severities={}, change="c")
    key = cache_mod.family_key(**base)
    assert cache_mod.family_key(**{**base, "family_id": "g"}) != key
    assert cache_mod.family_key(**{**base, "options": {"a": [2, 1]}}) != key
    assert cache_mod.family_key(**{**base, "severities": {"f/x": Severity.CONSIDER}}) != key
    assert cache_mod.family_key(**{**base, "change": "d"}) != key
    assert cache_mod.family_key(**{**base, "options": {"a": (1, 2)}}) == key
    with pytest.raises(cache_mod.Uncacheable):
        cache_mod.family_key(**{**base, "options": {"a": object()}})
