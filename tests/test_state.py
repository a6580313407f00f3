"""Stored reviews: identity, idempotent re-runs, interruption, races, corruption, deltas."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitrepo import Repo, commit_versions, git, make_change, sample_repo, state_digest
from reviewer.cli import main

BASE = {"src/a.ts": "export const a = 1\n", "reviewer.toml": ""}
PATCHED = {"src/a.ts": "export const a = 2\n"}


@pytest.fixture
def change(tmp_path: Path):
    return make_change(tmp_path, BASE, PATCHED)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _records(state: Path) -> list[Path]:
    return sorted((state / "reviews").glob("*.json")) if (state / "reviews").is_dir() else []


def test_idempotent_rerun_prints_byte_identical_report_and_says_so(change, capsys, tmp_path) -> None:
    repo, base, patch, _ = change
    state = tmp_path / "state"
    args = ["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--state-dir", str(state)]
    code1, out1, err1 = _run(capsys, *args)
    code2, out2, err2 = _run(capsys, *args)
    assert (code1, code2) == (0, 0) and out1 == out2 and out1.endswith("MERGE\n")
    assert err1 == "" and err2.startswith("reviewer: re-run: review ")
    assert len(_records(state)) == 1
    _, out3, err3 = _run(capsys, *args, "--fresh")
    assert out3 == out1 and "re-run" not in err3


def test_rerun_serves_every_format_from_the_record(change, capsys, tmp_path) -> None:
    repo, base, patch, _ = change
    state = tmp_path / "state"
    common = ["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--state-dir", str(state)]
    _run(capsys, *common, "--format", "json")
    _, sarif_first, _ = _run(capsys, *common, "--format", "sarif", "--fresh")
    _, sarif_again, err = _run(capsys, *common, "--format", "sarif")
    assert "re-run" in err and sarif_again == sarif_first


def _stale_variants(tmp_path: Path, repo: Repo, base: str, patch: Path) -> dict[str, list[str]]:
    other_base = repo.commit({"src/other.ts": "x\n"}, "another base")
    git(repo.path, "reset", "-q", "--hard", base)
    edited = tmp_path / "edited.patch"
    edited.write_bytes(patch.read_bytes().replace(b"+export const a = 2", b"+export const a = 3"))
    renamed = tmp_path / "renamed.patch"
    renamed.write_bytes(patch.read_bytes())
    artifact = tmp_path / "server.bin"
    artifact.write_bytes(b"v1")
    config = tmp_path / "alt.toml"
    config.write_text("[limits]\nmax_files = 10\n")
    return {
        "base": ["--base", other_base],
        "patch content": ["--patch", str(edited)],
        "patch name": ["--patch", str(renamed)],
        "artifact": ["--artifact", f"{artifact}={'0' * 64}"],
        "config": ["--config", str(config)],
        "expect-files": ["--expect-files", "1"],
        "scope": ["--scope", "all"],
    }


def test_any_identity_part_changing_means_a_new_review(change, capsys, tmp_path, monkeypatch) -> None:
    repo, base, patch, _ = change
    state = tmp_path / "state"
    first = ["--repo", str(repo.path), "--base", base, "--patch", str(patch), "--state-dir", str(state)]
    _run(capsys, "review", *first)
    for part, override in _stale_variants(tmp_path, repo, base, patch).items():
        args = list(first)
        for flag, value in zip(override[::2], override[1::2]):
            if flag in args:
                args[args.index(flag) + 1] = value
            else:
                args += [flag, value]
        _, _, err = _run(capsys, "review", *args)
        assert "re-run" not in err, part
        _, _, err = _run(capsys, "review", *args)
        assert "re-run" in err, f"{part}: the second identical run must be a re-run"
    # The artifact's content is part of the identity, not only its expected hash.
    artifact = tmp_path / "server.bin"
    artifact.write_bytes(b"v2")
    _, _, err = _run(capsys, "review", *first, "--artifact", f"{artifact}={'0' * 64}")
    assert "re-run" not in err
    for name in ("RULESET_VERSION", "__version__"):
        monkeypatch.setattr(f"reviewer.state.stored.{name}", "9999.0")
        _, _, err = _run(capsys, "review", *first)
        assert "re-run" not in err, name


def test_interrupted_run_leaves_no_completed_record(tmp_path) -> None:
    many = {f"src/f{i}.ts": "".join(f"export const v{j} = {j}\n" for j in range(150)) for i in range(250)}
    repo, base, patch, _ = make_change(tmp_path, many, {k: v.replace("v9 = 9", "v9 = 90") for k, v in many.items()})
    state = tmp_path / "state"
    cmd = [sys.executable, "-m", "reviewer", "review", "--repo", str(repo.path), "--base", base, "--patch", str(patch),
           "--state-dir", str(state)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not (state / "reviews").is_dir() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    if proc.returncode == -signal.SIGKILL:
        assert _records(state) == []
    done = subprocess.run(cmd, capture_output=True)
    assert done.returncode == 0 and b"re-run" not in done.stderr or proc.returncode == 0
    assert len(_records(state)) == 1


def test_concurrent_runs_make_one_record_and_identical_reports(change, tmp_path) -> None:
    repo, base, patch, _ = change
    state = tmp_path / "state"
    cmd = [sys.executable, "-m", "reviewer", "review", "--repo", str(repo.path), "--base", base, "--patch", str(patch),
           "--state-dir", str(state), "--format", "json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert results[0][0] == results[1][0]
    assert len(_records(state)) == 1
    assert sum(b"re-run" in err for _, err in results) == 1


@pytest.mark.parametrize("junk, why", [
    (lambda text: text[: len(text) // 2], "not JSON"),
    (lambda text: json.dumps({"schema": "something-else/9"}), "schema is not reviewer-state/1"),
    (lambda text: "\x00\xff\xfe binary junk", "not JSON"),
    (lambda text: json.dumps({**json.loads(text), "outputs": None}), "outputs are not text"),
])
def test_corrupt_record_is_an_error_naming_the_file(change, capsys, tmp_path, junk, why) -> None:
    repo, base, patch, _ = change
    state = tmp_path / "state"
    args = ["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--state-dir", str(state)]
    _run(capsys, *args)
    (record,) = _records(state)
    record.write_bytes(junk(record.read_text()).encode("utf-8", "surrogateescape"))
    code, out, err = _run(capsys, *args)
    assert code == 2 and out == "" and str(record) in err and why in err and "--fresh" in err
    code, out, err = _run(capsys, *args, "--fresh")
    assert code == 0 and out.endswith("MERGE\n")
    assert json.loads(record.read_text())["schema"] == "reviewer-state/1"


@pytest.fixture
def sample(tmp_path: Path):
    return sample_repo(tmp_path)


def test_delta_v5_to_v6_lists_every_seed_defect_as_resolved(sample, capsys, tmp_path) -> None:
    git_dir, base, patches = sample
    v5_json, v6_json = tmp_path / "v5.json", tmp_path / "v6.json"
    common = ["review", "--repo", str(git_dir), "--base", base, "--no-state"]
    assert _run(capsys, *common, "--patch", str(patches["v5"]), "--format", f"json={v5_json}")[0] == 1
    code, md, _ = _run(capsys, *common, "--patch", str(patches["v6"]), "--previous", str(v5_json),
                       "--format", f"json={v6_json}", "--format", "markdown")
    v5 = json.loads(v5_json.read_text())
    v6 = json.loads(v6_json.read_text())
    assert code == 0 and v6["verdict"] == "MERGE"
    must_fix = {f["id"] for f in v5["findings"] if f["severity"] == "must-fix"}
    assert must_fix and must_fix <= {d["id"] for d in v6["delta"]["resolved"]}
    assert v6["delta"]["new"] == [] or all(d["severity"] != "must-fix" for d in v6["delta"]["new"])
    assert "## Since the previous review" in md and md.index("## Since the previous review") < md.index("## MUST-FIX")
    code, diff_out, _ = _run(capsys, "diff", str(v5_json), str(v6_json))
    assert code == 0
    for f in v5["findings"]:
        if f["severity"] == "must-fix":
            assert f"`{f['rule']}`" in diff_out
    assert diff_out.count("**Resolved**") == 1


def test_pull_request_versions_chain_into_a_delta(sample, capsys, tmp_path) -> None:
    git_dir, base, patches = sample
    work = tmp_path / "work"
    commits = commit_versions(git_dir, patches, work)
    state = tmp_path / "state"
    pr = ["pr", "--repo", str(work), "--base", "origin/main", "--head", "feature", "--state-dir", str(state)]
    git(work, "branch", "-q", "-f", "feature", commits["v5"])
    assert _run(capsys, *pr, "--format", "comment")[0] == 1
    git(work, "branch", "-q", "-f", "feature", commits["v6"])
    before = state_digest(work)  # the test itself moved the branch; from here on nothing may change
    code, comment, _ = _run(capsys, *pr, "--format", "comment")
    assert code == 0
    lines = comment.splitlines()
    assert lines[0] == "<!-- reviewer:sticky-comment -->" and lines[3].startswith("**Since the previous review**")
    assert "resolved" in lines[3] and lines[4].startswith("- ✅ resolved:")
    # A re-run of v6 keeps the same delta (the chain names v5 as v6's predecessor).
    code, again, err = _run(capsys, *pr, "--format", "comment")
    assert again == comment and "re-run" in err
    assert state_digest(work) == before  # nothing written into the reviewed repository
    code, history, _ = _run(capsys, "history", "--repo", str(work), "--state-dir", str(state))
    assert code == 0 and len(history.splitlines()) == 3 and "DO-NOT-MERGE" in history and "MERGE" in history


def test_default_state_dir_is_outside_the_repository(change, capsys) -> None:
    repo, base, patch, _ = change
    before = state_digest(repo.path)
    _run(capsys, "review", "--repo", str(repo.path), "--base", base, "--patch", str(patch))
    assert state_digest(repo.path) == before
    cache = Path(os.environ["XDG_CACHE_HOME"]) / ".reviewer" / "reviews"
    assert len(list(cache.glob("*.json"))) == 1


# ---------------------------------------------------------------- a state directory that cannot be written
#
# Tests run as root, and root ignores permission bits: `chmod -R a-w` alone
# would prove nothing. Root obeys them once it lacks CAP_DAC_OVERRIDE (and
# CAP_DAC_READ_SEARCH, CAP_FOWNER), so the reviewer runs in a child process
# whose capability bounding set has those dropped before exec: after exec,
# root's capabilities are its bounding set, so the child is root that cannot
# write into an a-w directory, exactly like any user facing a read-only cache.
# Each test first proves, with the same child setup, that a write really
# fails, so it can never pass vacuously.

_PR_CAPBSET_DROP = 24
_WRITE_OVERRIDES = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


def _obey_permission_bits() -> None:
    """preexec_fn: a root child loses the capabilities that bypass permission bits."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in _WRITE_OVERRIDES:
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _as_unprivileged(cmd: list[str]) -> subprocess.CompletedProcess:
    preexec = _obey_permission_bits if os.geteuid() == 0 else None
    return subprocess.run(cmd, capture_output=True, text=True, preexec_fn=preexec, timeout=120)


def _make_read_only(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True) + [root]:
        path.chmod(path.stat().st_mode & ~0o222)


@pytest.fixture
def read_only_state(change, capsys, tmp_path):
    """A state directory holding one stored review, made read-only; (review args, first stdout, state)."""
    repo, base, patch, _ = change
    state = tmp_path / "state"
    args = ["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--state-dir", str(state)]
    code, first, _ = _run(capsys, *args)
    assert code == 0 and len(_records(state)) == 1
    _make_read_only(state)
    probe = _as_unprivileged([sys.executable, "-c", f"open({str(state / 'reviews' / 'probe')!r}, 'w')"])
    assert probe.returncode == 1 and "PermissionError" in probe.stderr, "the setup must make writes fail"
    try:
        yield args, first, state
    finally:
        for path in [state, *state.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def test_read_only_state_dir_still_replays_a_stored_review(read_only_state) -> None:
    """The lock file cannot be created, but the stored record is replayed byte for byte."""
    args, first, state = read_only_state
    before = _tree(state)
    done = _as_unprivileged([sys.executable, "-m", "reviewer", *args])
    assert (done.returncode, done.stdout) == (0, first), done.stderr
    assert done.stderr.startswith("reviewer: re-run: review ") and done.stderr.count("\n") == 1
    assert _tree(state) == before


def test_read_only_state_dir_without_a_stored_review_is_one_clear_line(read_only_state) -> None:
    """Nothing to replay and nowhere to store: exit 2, naming the directory and the ways out."""
    args, _, state = read_only_state
    before = _tree(state)
    for extra, why in [
        (["--scope", "all"], "and holds no stored review of these inputs to replay"),  # another identity
        (["--fresh"], "so --fresh cannot store a new review there"),  # a refused replay
    ]:
        done = _as_unprivileged([sys.executable, "-m", "reviewer", *args, *extra])
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr == (
            f"reviewer: state directory {state} is read-only (Permission denied) {why}; "
            "use --state-dir DIR (a writable directory) or --no-state\n"
        )
    assert _tree(state) == before


def test_a_state_dir_under_a_read_only_parent_is_one_clear_line(change, tmp_path) -> None:
    """The state directory does not exist and cannot be created: the same one line, never a traceback."""
    repo, base, patch, _ = change
    parent = tmp_path / "ro"
    parent.mkdir()
    _make_read_only(parent)
    try:
        done = _as_unprivileged([sys.executable, "-m", "reviewer", "review", "--repo", str(repo.path), "--base", base,
                                 "--patch", str(patch), "--state-dir", str(parent / "state")])
    finally:
        parent.chmod(0o755)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"reviewer: state directory {parent / 'state'} is read-only (Permission denied)")
    assert "--state-dir DIR" in done.stderr and "--no-state" in done.stderr and done.stderr.count("\n") == 1


def _break(state: Path, key: str, what: str) -> Path:
    """Turn one path of the store into something no write can go through (works as root too)."""
    reviews = state / "reviews"
    if what == "reviews is a file":
        for p in reviews.iterdir():
            p.unlink()
        reviews.rmdir()
        reviews.write_text("not a directory")
        return reviews
    if what == "lock is a directory":
        lock = reviews / f"{key}.lock"
        lock.unlink()
        (lock / "inside").mkdir(parents=True)
        return lock
    if what == "lock is a dangling symlink":
        lock = reviews / f"{key}.lock"
        lock.unlink()
        lock.symlink_to(state / "missing" / "dir" / "x.lock")
        return lock
    record = reviews / f"{key}.json"  # "record is a directory": only --fresh gets as far as saving
    record.unlink()
    (record / "inside").mkdir(parents=True)
    return record


@pytest.mark.parametrize("what, message", [
    ("reviews is a file", "state directory {state}: cannot create {path} (File exists)"),
    ("lock is a directory", "state directory {state}: cannot create {path} (Is a directory)"),
    ("lock is a dangling symlink", "state directory {state}: cannot create {path} (No such file or directory)"),
    ("record is a directory", "state record {path}: cannot write (Is a directory)"),
])
def test_any_other_store_failure_is_one_line_naming_the_path(change, capsys, tmp_path, what, message) -> None:
    repo, base, patch, _ = change
    state = tmp_path / "state"
    args = ["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--state-dir", str(state)]
    assert _run(capsys, *args)[0] == 0
    (record,) = _records(state)
    broken = _break(state, record.stem, what)
    code, out, err = _run(capsys, *args, "--fresh")
    assert (code, out) == (2, "")
    expected = message.format(state=state, path=broken)
    assert err == f"reviewer: {expected}; use --state-dir DIR (a writable directory) or --no-state\n"
