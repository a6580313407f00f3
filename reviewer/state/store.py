"""Stored reviews, matched by explicit identity (never by "newest").

A review's identity is everything that can change its report: base commit,
patch hash and name, artifact hashes, the effective configuration, scope,
the pull request (refs, commits, number, head branch), the permalinks,
rule-set and tool versions. A record is written only
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
from typing import IO, Any, Iterator, Mapping

from reviewer.errors import ReviewerError

SCHEMA = "reviewer-state/1"
# Errors that mean "this process may not write here" (permission bits, an
# immutable or read-only mount) rather than "something here is broken".
_NOT_WRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_ELSEWHERE = "use --state-dir DIR (a writable directory) or --no-state"


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


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
        # Why the store is read-only, once lock() has found it so.
        self.read_only_reason: str | None = None

    @property
    def reviews(self) -> Path:
        return self.root / "reviews"

    def _path(self, key: str) -> Path:
        return self.reviews / f"{key}.json"

    def _make_dirs(self) -> None:
        self.reviews.mkdir(parents=True, exist_ok=True)
        (self.root / "prs").mkdir(exist_ok=True)

    def _cannot(self, what: str, exc: OSError) -> ReviewerError:
        path = exc.filename or self.root
        return ReviewerError(f"state directory {self.root}: cannot {what} {path} ({_why(exc)}); {_ELSEWHERE}")

    def _ensure(self) -> None:
        try:
            self._make_dirs()
        except OSError as exc:
            raise self._cannot("create", exc) from None

    def _open_lock(self, key: str) -> IO[bytes] | None:
        """The identity's lock file, or None when the store is read-only."""
        try:
            self._make_dirs()
            return open(self.reviews / f"{key}.lock", "a+b")
        except OSError as exc:
            if exc.errno not in _NOT_WRITABLE:
                raise self._cannot("create", exc) from None
            self.read_only_reason = _why(exc)
            return None

    @contextmanager
    def lock(self, key: str) -> Iterator[bool]:
        """Serialise runs of one identity; yields whether this run may save.

        Different identities never wait on each other. On a read-only store
        (no lock file can be created) it yields False without locking: a
        stored record can still be replayed, because records are only ever
        replaced whole by rename, so reading needs no lock; but nothing can
        be saved, so a run with no record to replay should raise
        `read_only_error()` before it reviews.
        """
        fh = self._open_lock(key)
        if fh is None:
            yield False
            return
        with fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX)
            except OSError as exc:
                raise ReviewerError(f"state lock {fh.name}: cannot lock ({_why(exc)}); {_ELSEWHERE}") from None
            try:
                yield True
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def read_only_error(self, fresh: bool = False) -> ReviewerError:
        """Why a run on a read-only store cannot go on: nothing to replay (or
        --fresh refused to replay it), and a new review cannot be stored."""
        reason = self.read_only_reason or "not writable"
        why = "so --fresh cannot store a new review there" if fresh else "and holds no stored review of these inputs to replay"
        return ReviewerError(f"state directory {self.root} is read-only ({reason}) {why}; {_ELSEWHERE}")

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
        try:
            _replace_atomically(path, payload)
        except OSError as exc:
            raise ReviewerError(f"state record {path}: cannot write ({_why(exc)}); {_ELSEWHERE}") from None

    def save(self, record: Record) -> None:
        if self.read_only_reason is not None:
            # lock() already found that nothing can be written here; a record
            # already in place means the caller chose not to replay it (--fresh).
            raise self.read_only_error(fresh=self._path(record.key).is_file())
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


def _replace_atomically(path: Path, payload: bytes) -> None:
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


def now() -> float:
    return round(time.time(), 3)


def utc_iso(seconds: float) -> str:
    """A record's `recorded_at` as UTC ISO 8601, to the second: `2026-02-03T04:05:06Z`."""
    from datetime import datetime, timezone

    try:
        return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return "-"  # a time no calendar holds: shown as unknown, never a crash of `history`


def recorded_head(identity: Mapping[str, Any]) -> str | None:
    """The head commit a stored review of a pull request reviewed, or None."""
    pr = identity.get("pull_request")
    if isinstance(pr, dict):
        head = pr.get("head")
    elif isinstance(pr, list) and len(pr) >= 4:
        head = pr[3]  # records written before identities named their fields: [base_ref, head_ref, base, head, ...]
    else:
        head = None
    return head if isinstance(head, str) else None
