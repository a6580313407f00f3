"""Shipped samples: plain files turned into a git repository whose base SHA is
the same on every machine (fixed names, dates, modes; no work tree)."""

from __future__ import annotations

import os
import subprocess
import tomllib
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from reviewer.errors import ReviewerError

FIXED_IDENTITY = {
    "GIT_AUTHOR_NAME": "reviewer samples",
    "GIT_AUTHOR_EMAIL": "samples@reviewer.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "reviewer samples",
    "GIT_COMMITTER_EMAIL": "samples@reviewer.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
}


@dataclass(frozen=True)
class SamplePatch:
    name: str
    file: str
    sha256: str
    files: int
    verdict: str


@dataclass(frozen=True)
class Sample:
    name: str
    description: str
    root: Traversable
    base_dir: str
    commit_message: str
    patches: tuple[SamplePatch, ...]

    def patch(self, name: str) -> SamplePatch:
        for p in self.patches:
            if p.name == name:
                return p
        raise ReviewerError(f"sample {self.name} has no patch {name!r}")

    def patch_bytes(self, name: str) -> bytes:
        return self.root.joinpath(self.patch(name).file).read_bytes()


def samples_root() -> Traversable:
    return resources.files("reviewer.samples")


def list_samples() -> tuple[str, ...]:
    return tuple(sorted(p.name for p in samples_root().iterdir() if p.is_dir() and p.joinpath("manifest.toml").is_file()))


def load_sample(name: str) -> Sample:
    root = samples_root().joinpath(name)
    manifest = root.joinpath("manifest.toml")
    if not manifest.is_file():
        raise ReviewerError(f"no sample named {name!r} (have: {', '.join(list_samples()) or 'none'})")
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    patches = tuple(
        SamplePatch(p["name"], p["file"], p["sha256"], int(p["files"]), p["verdict"]) for p in data.get("patch", [])
    )
    return Sample(
        name=data["name"],
        description=data.get("description", ""),
        root=root,
        base_dir=data.get("base_dir", "base"),
        commit_message=data.get("commit_message", f"base: {name}"),
        patches=patches,
    )


def _walk(node: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out: list[tuple[str, Traversable]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            if child.name == "__pycache__":
                continue
            out.extend(_walk(child, rel + "/"))
        else:
            out.append((rel, child))
    return out


def _git(git_dir: Path, *args: str, stdin: bytes = b"", index: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(FIXED_IDENTITY, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], input=stdin, capture_output=True, env=env)
    if proc.returncode != 0:
        raise ReviewerError(f"materialising the sample failed: git {args[0]}: {proc.stderr.decode().strip()}")
    return proc.stdout.decode().strip()


def materialize(sample: Sample, dest: Path) -> tuple[Path, str]:
    """Create a bare repository at `dest` holding the sample's base; return (git_dir, base sha)."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(dest)], check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})
    index = dest / "reviewer-sample.index"
    for rel, node in _walk(sample.root.joinpath(sample.base_dir)):
        oid = _git(dest, "hash-object", "-w", "--stdin", stdin=node.read_bytes())
        _git(dest, "update-index", "--add", "--cacheinfo", f"100644,{oid},{rel}", index=index)
    tree = _git(dest, "write-tree", index=index)
    index.unlink()
    commit = _git(dest, "commit-tree", tree, "-m", sample.commit_message)
    _git(dest, "update-ref", "refs/heads/main", commit)
    return dest, commit
