"""Which commits a sweep reviews, and which of them this shard takes.

A commit is reviewed against its first parent: for an ordinary commit that
is its own change, for a merge it is everything the merge brought in (what
`reviewer pr` would have reviewed). A root commit has no parent and is
listed, never reviewed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.gitio import Repo, is_full_sha

_SHARD = re.compile(r"(?P<index>\d{1,6})/(?P<count>\d{1,6})")


@dataclass(frozen=True)
class Item:
    """One commit to review, with the parent it is reviewed against (None: a root commit)."""

    commit: str
    parent: str | None


@dataclass(frozen=True)
class Shard:
    """`--shard I/N`: this run takes the commits whose shard number is I (1-based) of N."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> "Shard":
        match = _SHARD.fullmatch(text)
        if match is None:
            raise ReviewerError(f"--shard {text!r}: write it as I/N, e.g. 2/8")
        index, count = int(match["index"]), int(match["count"])
        if count < 1 or not 1 <= index <= count:
            raise ReviewerError(f"--shard {text!r}: I must be between 1 and N, and N at least 1")
        return cls(index, count)

    def takes(self, commit: str) -> bool:
        # By the commit's own id, not its position: a shard keeps its commits
        # when the range grows, so a matrix job's earlier output stays valid.
        digest = hashlib.sha256(commit.encode("ascii")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


def _refuse_option(text: str, flag: str) -> None:
    if not text or text.startswith("-"):
        raise ReviewerError(f"{flag} {text!r}: not a revision range")


def range_commits(repo: Repo, spec: str, first_parent: bool) -> list[str]:
    """`A..B` as git lists it, oldest first (deterministic for a given history)."""
    _refuse_option(spec, "--range")
    if ".." not in spec or "..." in spec:
        raise ReviewerError(f"--range {spec!r}: write it as A..B (the commits reachable from B and not from A)")
    args = ["rev-list", "--reverse", "--topo-order"]
    if first_parent:
        args.append("--first-parent")
    res = repo.run(*args, "--end-of-options", spec, check=False)
    if res.returncode != 0:
        raise ReviewerError(f"--range {spec!r}: {res.last_error_line} in {repo.display}")
    return res.stdout.decode().split()


def listed_commits(repo: Repo, path: str) -> list[str]:
    """`--commits FILE`: one commit (id or ref) per line; `#` starts a comment."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewerError(f"--commits {path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    out: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        word = raw.split("#", 1)[0].strip()
        if not word:
            continue
        _refuse_option(word, f"--commits {path}:{number}:")
        res = repo.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{word}^{{commit}}", check=False)
        if res.returncode != 0:
            raise ReviewerError(f"--commits {path}:{number}: {word!r} is not a commit in {repo.display}")
        out.append(res.stdout.decode().strip())
    return out


def with_parents(repo: Repo, commits: list[str]) -> tuple[Item, ...]:
    """Each commit with its first parent, once each, in the order given."""
    seen: set[str] = set()
    unique = [c for c in commits if not (c in seen or seen.add(c))]
    if not unique:
        return ()
    out = repo.run("rev-list", "--no-walk=unsorted", "--parents", "--stdin", stdin=("\n".join(unique) + "\n").encode())
    parents: dict[str, str | None] = {}
    for line in out.stdout.decode().splitlines():
        ids = line.split()
        if ids and all(is_full_sha(i) for i in ids):
            parents[ids[0]] = ids[1] if len(ids) > 1 else None
    missing = [c for c in unique if c not in parents]
    if missing:
        raise ReviewerError(f"commit {missing[0]} could not be read from {repo.display}")
    return tuple(Item(c, parents[c]) for c in unique)
