"""The patch is read exactly once, into memory bounded by the limit, and those
bytes are hashed, keyed, stored and reviewed: a pipe, standard input or a
file that changes between two reads can never put one patch's verdict under
another patch's identity. Paths git reports are refused or escaped, never
passed raw to a reader."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gitrepo import make_change, sample_repo
from reviewer.cli import main
from reviewer.errors import ReviewerError
from reviewer.inputs.patchfile import unquote_git_path
from reviewer.state.stored import checked


def _cli(*args: str, stdin: bytes | None = None, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reviewer", *args], input=stdin, capture_output=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def _feed_fifo(path: Path, data: bytes, hold: threading.Event | None = None) -> threading.Thread:
    """Write `data` into the FIFO, then keep it open (the patch never ends) until `hold` is set."""
    def writer() -> None:
        with open(path, "wb") as fh:
            fh.write(data)
            fh.flush()
            if hold is not None:
                hold.wait(timeout=300)
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    return thread


def test_standard_input_is_a_patch(tmp_path: Path) -> None:
    git_dir, base, patches = sample_repo(tmp_path)
    v5 = patches["v5"].read_bytes()
    proc = _cli("review", "--repo", str(git_dir), "--base", base, "--patch", "-", "--no-state", "--format", "json",
                stdin=v5)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    import hashlib

    assert report["patch"]["sha256"] == hashlib.sha256(v5).hexdigest()
    assert report["patch"]["name"] == "stdin"
    assert len([f for f in report["findings"] if f["severity"] == "must-fix"]) == 13


def test_process_substitution_works(tmp_path: Path) -> None:
    git_dir, base, patches = sample_repo(tmp_path)
    cmd = (f'"{sys.executable}" -m reviewer review --repo "{git_dir}" --base {base} '
           f'--patch <(cat "{patches["v6"]}") --no-state --format json')
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "MERGE"


def test_a_fifo_is_read_once_and_stored_under_what_was_reviewed(tmp_path: Path, capsys) -> None:
    """A second read of a FIFO would see nothing (or another writer's patch): the
    stored identity, the report and the verdict must all come from one read."""
    git_dir, base, patches = sample_repo(tmp_path)
    state = tmp_path / "state"
    fifo = tmp_path / "patch.fifo"
    os.mkfifo(fifo)
    writer = _feed_fifo(fifo, patches["v5"].read_bytes())
    assert main(["review", "--repo", str(git_dir), "--base", base, "--patch", str(fifo), "--state-dir", str(state),
                 "--format", "json"]) == 1
    writer.join()
    first = json.loads(capsys.readouterr().out)
    records = list((state / "reviews").glob("*.json"))
    assert len(records) == 1
    stored = json.loads(records[0].read_text())
    assert stored["identity"]["patch_sha256"] == first["patch"]["sha256"] == stored["report"]["patch"]["sha256"]
    assert stored["verdict"] == "DO-NOT-MERGE"
    # The same bytes from a plain file are the same review: replayed, and still DO-NOT-MERGE.
    same = tmp_path / "patch.fifo.copy"
    same.write_bytes(patches["v5"].read_bytes())
    os.unlink(fifo)
    os.rename(same, fifo)
    assert main(["review", "--repo", str(git_dir), "--base", base, "--patch", str(fifo), "--state-dir", str(state),
                 "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert "re-run" in err and json.loads(out)["verdict"] == "DO-NOT-MERGE"
    # v6 from a FIFO is its own review, never v5's record.
    os.unlink(fifo)
    os.mkfifo(fifo)
    writer = _feed_fifo(fifo, patches["v6"].read_bytes())
    assert main(["review", "--repo", str(git_dir), "--base", base, "--patch", str(fifo), "--state-dir", str(state),
                 "--format", "json"]) == 0
    writer.join()
    assert "re-run" not in capsys.readouterr().err
    assert len(list((state / "reviews").glob("*.json"))) == 2


_PEAK_WRAPPER = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[1:])\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "print(f'peak-kib {usage.ru_maxrss}', file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def test_a_huge_patch_on_standard_input_is_bounded_by_the_limit_while_reading(tmp_path: Path) -> None:
    repo, base, patch, _ = make_change(tmp_path, {"a.ts": "export const a = 1\n"}, {"a.ts": "export const a = 2\n"})
    config = tmp_path / "reviewer.toml"
    config.write_text("[limits]\nmax_patch_bytes = 1048576\n")
    size = 256 * 1024 * 1024
    # The reviewer runs under a small wrapper that reports its peak memory: a child forked
    # straight from pytest inherits pytest's own peak (the kernel keeps it across exec), which
    # grows with the test suite and says nothing about the reviewer.
    proc = subprocess.Popen(
        [sys.executable, "-c", _PEAK_WRAPPER, sys.executable, "-m", "reviewer", "review", "--repo", str(repo.path),
         "--base", base, "--patch", "-", "--config", str(config), "--no-state", "--format", "json"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    chunk = patch.read_bytes() + b"x" * (1024 * 1024)

    def feed() -> None:
        sent = 0
        assert proc.stdin is not None
        with proc.stdin:
            while sent < size:
                proc.stdin.write(chunk)
                sent += len(chunk)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    out = proc.stdout.read() if proc.stdout else b""
    err = proc.stderr.read() if proc.stderr else b""
    _, status, _ = os.wait4(proc.pid, 0)
    feeder.join()
    assert os.waitstatus_to_exitcode(status) == 1, err
    peak_kib = int(err.decode().strip().splitlines()[-1].removeprefix("peak-kib "))
    report = json.loads(out)
    limits = next(c for c in report["checks"] if c["id"] == "integrity/limits")
    assert limits["status"] == "fail" and "over max_patch_bytes 1,048,576" in limits["detail"]
    # ru_maxrss is in KiB on Linux: the 256 MiB patch never sat in memory.
    assert peak_kib < 160 * 1024, peak_kib


def test_the_whole_review_is_time_bounded_even_while_reading(tmp_path: Path) -> None:
    repo, base, patch, _ = make_change(tmp_path, {"a.ts": "export const a = 1\n"}, {"a.ts": "export const a = 2\n"})
    config = tmp_path / "reviewer.toml"
    config.write_text("[limits]\nreview_seconds = 1\n")
    fifo = tmp_path / "slow.fifo"
    os.mkfifo(fifo)
    never_ends = threading.Event()
    writer = _feed_fifo(fifo, patch.read_bytes()[:20], hold=never_ends)
    proc = _cli("review", "--repo", str(repo.path), "--base", base, "--patch", str(fifo), "--config", str(config),
                "--no-state", timeout=120)
    # The review gave up while its input was still open: the bound, not the end of input, stopped it.
    assert writer.is_alive()
    never_ends.set()
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.decode().strip().startswith("reviewer: the review did not finish within limits.review_seconds (1 s)")
    assert b"Traceback" not in proc.stderr
    writer.join()


@pytest.mark.parametrize("name", [b"src/caf\xe9.ts", b"src/\xff\xfe.ts"])
def test_a_path_that_is_not_utf8_is_refused_and_shown_escaped(tmp_path: Path, name: bytes) -> None:
    repo, base, _, _ = make_change(tmp_path, {"a.ts": "export const a = 1\n"}, {"a.ts": "export const a = 1\n"})
    quoted = "".join(chr(b) if 0x20 < b < 0x7F else f"\\{b:03o}" for b in name)
    patch = (f'diff --git "a/{quoted}" "b/{quoted}"\nnew file mode 100644\nindex 0000000..1111111\n'
             f'--- /dev/null\n+++ "b/{quoted}"\n@@ -0,0 +1 @@\n+export const x = 1\n').encode()
    path = tmp_path / "odd.patch"
    path.write_bytes(patch)
    state = tmp_path / "state"
    outputs = []
    for _ in range(2):
        proc = _cli("review", "--repo", str(repo.path), "--base", base, "--patch", str(path), "--state-dir", str(state),
                    "--format", "markdown", "--format", f"json={tmp_path / 'r.json'}")
        assert proc.returncode == 1, proc.stderr
        assert b"internal error" not in proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    paths = next(c for c in report["checks"] if c["id"] == "integrity/paths")
    escaped = "".join(chr(b) if b < 0x80 else f"\\x{b:02x}" for b in name)
    assert paths["status"] == "fail" and f"'{escaped}': not valid UTF-8" in paths["detail"]
    assert escaped.encode() in outputs[0]
    outputs[0].decode("utf-8")  # the whole report is valid UTF-8


def test_control_characters_in_a_path_never_reach_a_reader_raw(tmp_path: Path) -> None:
    name = "src/esc\x1b[2J\x07bell.ts"
    repo, base, patch, _ = make_change(tmp_path, {"a.ts": "export const a = 1\n"}, {name: "export const x = 1\n"})
    for fmt in ("markdown", "github", "comment", "json", "sarif"):
        proc = _cli("review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--no-state",
                    "--format", fmt)
        assert proc.returncode == 1, (fmt, proc.stderr)
        assert b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout, fmt
    proc = _cli("review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--no-state",
                "--format", "json")
    paths = next(c for c in json.loads(proc.stdout)["checks"] if c["id"] == "integrity/paths")
    assert paths["status"] == "fail" and "control character in path" in paths["detail"]


@pytest.mark.parametrize("raw", [b'"\\48"', b'"abc\\"', b'"\\q"', b'"unterminated', b'"\\400"'])
def test_malformed_quoting_is_unreadable_not_a_crash(raw: bytes) -> None:
    assert unquote_git_path(raw) is None


def test_git_quoting_round_trips() -> None:
    assert unquote_git_path(b'"caf\\303\\251 \\"q\\" \\\\ \\t.ts"') == 'café "q" \\ \t.ts'
    assert unquote_git_path(b"plain/path.ts") == "plain/path.ts"


def test_a_bad_octal_escape_in_a_rename_header_gets_a_verdict(tmp_path: Path, capsys) -> None:
    repo, base, _, _ = make_change(tmp_path, {"a.ts": "export const a = 1\n"}, {"a.ts": "export const a = 1\n"})
    patch = tmp_path / "rename.patch"
    patch.write_bytes(b'diff --git a/a.ts b/b.ts\nsimilarity index 100%\nrename from "\\48"\nrename to b.ts\n')
    code = main(["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--no-state"])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert "internal error" not in err and out.rstrip().splitlines()[-1] == "DO-NOT-MERGE"


def test_text_that_cannot_be_written_is_refused_before_anything_is_stored() -> None:
    with pytest.raises(ReviewerError, match="not valid Unicode"):
        checked({"markdown": "fine", "json": "bad \udce9"})
    assert checked({"markdown": "fine"}) == {"markdown": "fine"}


def test_resource_module_is_linux_rusage() -> None:
    # The memory assertion above reads ru_maxrss in KiB, as Linux reports it.
    assert sys.platform.startswith("linux") and resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 1000
