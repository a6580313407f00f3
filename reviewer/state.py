"""Stored reviews, matched by explicit identity (never by "newest").

A review's identity is everything that can change its report: base commit,
patch hash and name, artifact hashes, the effective configuration, scope,
the pull-request refs, rule-set and tool versions. A record is written only
when the review completed (temporary file, fsync, rename), so an interrupted
run leaves nothing that claims completion. A corrupt record is an error that
names the file, never "no previous review".
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from reviewer.errors import ReviewerError

SCHEMA = "reviewer-state/1"


def default_state_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / ".reviewer"


@dataclass(frozen=True)
class Identity:
    fields: Mapping[str, Any]

    @property
    def key(self) -> str:
        canonical = json.dumps(self.fields, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Record:
    key: str
    identity: Mapping[str, Any]
    repo: str
    verdict: str
    outputs: Mapping[str, str]  # format -> rendered text
    report: Mapping[str, Any]  # the JSON report, for deltas and history
    recorded_at: float


class StateStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def reviews(self) -> Path:
        return self.root / "reviews"

    def _path(self, key: str) -> Path:
        return self.reviews / f"{key}.json"

    def _ensure(self) -> None:
        try:
            self.reviews.mkdir(parents=True, exist_ok=True)
            (self.root / "prs").mkdir(exist_ok=True)
        except OSError as exc:
            raise ReviewerError(f"state directory {self.root}: cannot create ({exc.strerror}); use --state-dir") from None

    @contextmanager
    def lock(self, key: str) -> Iterator[None]:
        """Serialise runs of one identity; different identities never wait on each other."""
        self._ensure()
        with open(self.reviews / f"{key}.lock", "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def load(self, key: str) -> Record | None:
        return self.load_path(self._path(key), expected_key=key)

    def load_path(self, path: Path, expected_key: str | None = None) -> Record | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ReviewerError(f"state record {path}: unreadable ({exc.strerror}); run with --fresh to replace it") from None
        corrupt = f"state record {path} is corrupt"
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ReviewerError(f"{corrupt} (not JSON: {exc}); run with --fresh to replace it") from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ReviewerError(f"{corrupt} (schema is not {SCHEMA}); run with --fresh to replace it")
        try:
            record = Record(
                key=data["key"], identity=data["identity"], repo=data["repo"], verdict=data["verdict"],
                outputs=data["outputs"], report=data["report"], recorded_at=float(data["recorded_at"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReviewerError(f"{corrupt} (missing or bad field {exc}); run with --fresh to replace it") from None
        if expected_key is not None and (record.key != expected_key or Identity(record.identity).key != expected_key):
            raise ReviewerError(f"{corrupt} (its identity does not match its name); run with --fresh to replace it")
        if not isinstance(record.outputs, dict) or not all(isinstance(v, str) for v in record.outputs.values()):
            raise ReviewerError(f"{corrupt} (outputs are not text); run with --fresh to replace it")
        return record

    def atomic_write(self, path: Path, payload: bytes) -> None:
        """Temporary file, fsync, rename: readers see the old record or the new one, never half."""
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise
            raise

    def save(self, record: Record) -> None:
        self._ensure()
        data = {
            "schema": SCHEMA, "key": record.key, "identity": record.identity, "repo": record.repo,
            "verdict": record.verdict, "recorded_at": record.recorded_at,
            "outputs": record.outputs, "report": record.report,
        }
        self.atomic_write(self._path(record.key), json.dumps(data, sort_keys=True).encode())

    def history(self, repo: str) -> list[Record]:
        if not self.reviews.is_dir():
            return []
        records = [self.load_path(p, expected_key=p.stem) for p in sorted(self.reviews.glob("*.json"))]
        mine = [r for r in records if r is not None and r.repo == repo]
        return sorted(mine, key=lambda r: (r.recorded_at, r.key))


def now() -> float:
    return round(time.time(), 3)
