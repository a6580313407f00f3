"""No review ever contacts a remote or runs a transport program, whatever the
repository's config says: a canary program is wired into every way a partial
clone could lazily fetch a missing object, and must never run."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from gitrepo import Repo, git
from reviewer.cli import main


def _canary(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "CANARY"
    script = tmp_path / "canary.sh"
    script.write_text(f"#!/bin/sh\necho ran >> '{marker}'\nexit 1\n")
    script.chmod(0o755)
    return marker, script


def _config_digest(repo: Path) -> str:
    return hashlib.sha256((repo / ".git" / "config").read_bytes()).hexdigest()


def _promisor_repo(tmp_path: Path, transport: str) -> tuple[Repo, str, str, Path, Path]:
    """A checkout whose base blob is missing, configured as a partial clone whose
    promisor remote would run the canary if git ever fetched from it."""
    marker, script = _canary(tmp_path)
    upstream = Repo(tmp_path / "upstream")
    upstream.commit({"src/a.ts": "export const a = 1\n"})
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"src/a.ts": "export const a = 1\n", "README.md": "hi\n"}, "base")
    git(repo.path, "checkout", "-q", "-b", "topic")
    head = repo.commit({"src/a.ts": "export const a = 2\n"}, "topic")
    patch = tmp_path / "change.patch"
    patch.write_bytes(repo.diff(base, head))
    git(repo.path, "checkout", "-q", "main")
    blob = git(repo.path, "rev-parse", f"{base}:src/a.ts")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    settings = {
        "core.repositoryformatversion": "1",
        "extensions.partialClone": "origin",
        "remote.origin.promisor": "true",
        "remote.origin.partialclonefilter": "blob:none",
        "remote.origin.fetch": "+refs/heads/*:refs/remotes/origin/*",
        "protocol.allow": "always",
        "protocol.ext.allow": "always",
        "protocol.file.allow": "always",
        "uploadpack.allowFilter": "true",
    }
    if transport == "ext":
        settings["remote.origin.url"] = f"ext::{script} %S"
    else:
        settings["remote.origin.url"] = f"file://{upstream.path}"
        settings["remote.origin.uploadpack"] = str(script)
    for key, value in settings.items():
        git(repo.path, "config", key, value)
    return repo, base, head, patch, marker


@pytest.mark.parametrize("transport", ["ext", "file-uploadpack"])
def test_git_itself_would_run_the_canary(tmp_path: Path, transport: str) -> None:
    """The trap is real: plain git, reading the missing blob, runs the program."""
    repo, base, _, _, marker = _promisor_repo(tmp_path, transport)
    git(repo.path, "cat-file", "-p", f"{base}:src/a.ts", check=False)
    assert marker.exists()


@pytest.mark.parametrize("transport", ["ext", "file-uploadpack"])
@pytest.mark.parametrize("command", ["review", "verify", "pr"])
def test_no_review_runs_a_transport_or_fetches_lazily(tmp_path: Path, transport: str, command: str, capsys) -> None:
    repo, base, head, patch, marker = _promisor_repo(tmp_path, transport)
    config = _config_digest(repo.path)
    if command == "pr":
        argv = ["pr", "--repo", str(repo.path), "--base", "main", "--head", "topic", "--no-state"]
    else:
        argv = [command, "--repo", str(repo.path), "--base", base, "--patch", str(patch)]
        argv += ["--no-state"] if command == "review" else []
    code = main(argv)
    out, err = capsys.readouterr()
    assert not marker.exists(), "a transport program ran"
    assert _config_digest(repo.path) == config, "the repository's config was written"
    # The base blob is not there to be had: never a silent MERGE.
    assert code in (1, 2), out
    assert "internal error" not in err and "Traceback" not in err
    if code == 1:
        assert out.rstrip().splitlines()[-1] == ("GATE FAILED" if command == "verify" else "DO-NOT-MERGE")
    assert head
