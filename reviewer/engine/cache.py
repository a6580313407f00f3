"""An optional on-disk cache of what each rule family concluded about a change.

Grain: one entry per (family, change). The TypeScript model is built from
tree-sitter nodes, which live in native memory and cannot be written out and
read back as plain data, so a finer per-file cache would mean a second,
serialisable model. What *is* plain data is a family's `Outcome` (status,
summary, findings), and it is a pure function of:

- the code that computed it: every source file of the reviewer package and
  the rule families, the tree-sitter grammar and binding versions, Python's
  version (see `code_digest`);
- the family's options and configured severities;
- the base and patched trees (git tree ids name their entire content, so any
  file a rule reads through `TreeView` or the model is covered);
- the change set (hunks and added lines come from the patch text, which the
  trees alone do not determine).

All of these go into the key, so a hit can only return what a fresh run would
compute. Reviewing the same change again (`--fresh`, another `--scope`,
`reviewer pr` after `reviewer review`, a CI re-run) skips parsing and rules.

Safety: entries are JSON (never pickle), written to a temporary file and
renamed into place, so concurrent runs and a deleted directory are harmless.
An entry is trusted only if its schema, key, checksum and every field's type
check out; anything else is a miss, logged at debug level.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

from reviewer import RULESET_VERSION, __version__
from reviewer.change.changeset import ChangeSet
from reviewer.report.model import Finding, Location, Severity
from reviewer.engine.api import Outcome

SCHEMA = "reviewer-cache/2"

log = logging.getLogger("reviewer.engine.cache")


class Uncacheable(Exception):
    """Options that are not plain data: the family runs uncached rather than risk a wrong key."""


def default_cache_dir() -> Path:
    """`${XDG_CACHE_HOME:-~/.cache}/reviewer`, beside (not inside) the stored reviews' `.reviewer`."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "reviewer"


# -- keys ---------------------------------------------------------------------------
def _source_files(root: Path) -> Iterable[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """Everything that computes an outcome, so an edited rule never reads a stale entry.

    Hashing the sources (~0.5 MB) takes a few milliseconds; relying on a
    hand-bumped version would serve stale results during development.
    """
    import reviewer
    import reviewer.rules as rules_pkg
    import tree_sitter
    import tree_sitter_typescript

    h = hashlib.sha256()
    h.update(f"{SCHEMA}\0{__version__}\0{RULESET_VERSION}\0{sys.version_info[:2]}\0".encode())
    # The grammar and binding by content (not importlib.metadata: ~50 ms to import).
    for package in (tree_sitter, tree_sitter_typescript):
        for path in sorted(Path(package.__file__).parent.glob("*.so")):
            h.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    roots = [Path(reviewer.__file__).parent, *(Path(p) for p in rules_pkg.__path__)]
    for root in roots:
        for path in _source_files(root):
            h.update(str(path.relative_to(root)).encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _plain(value: Any) -> Any:
    """Options as canonical JSON-able data; anything else is Uncacheable."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise Uncacheable("non-string option key")
        return {k: _plain(v) for k, v in value.items()}
    raise Uncacheable(f"option value of type {type(value).__name__}")


def changeset_digest(changeset: ChangeSet) -> str:
    h = hashlib.sha256()
    h.update(f"{changeset.base}\0{changeset.base_tree}\0{changeset.patched_tree}\0".encode())
    for f in changeset.files:
        fields = [f.path, f.old_path, f.status.value, f.old_mode, f.new_mode, f.old_blob, f.new_blob, f.binary,
                  [[x.old_start, x.old_count, x.new_start, x.new_count, list(x.added), list(x.removed)] for x in f.hunks],
                  None if f.base_bytes is None else hashlib.sha256(f.base_bytes).hexdigest(),
                  None if f.patched_bytes is None else hashlib.sha256(f.patched_bytes).hexdigest()]
        h.update(json.dumps(fields).encode() + b"\n")
    return h.hexdigest()


def family_key(family_id: str, options: Mapping[str, Any], severities: Mapping[str, Severity], change: str) -> str:
    """Raises Uncacheable when the options are not plain data."""
    material = {
        "family": family_id,
        "code": code_digest(),
        "options": _plain(options),
        "severities": {k: v.value for k, v in sorted(severities.items())},
        "change": change,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# -- (de)serialisation -------------------------------------------------------------
def _location_data(loc: Location) -> dict[str, Any]:
    return {"path": loc.path, "line": loc.line, "end_line": loc.end_line, "note": loc.note}


def outcome_data(outcome: Outcome) -> dict[str, Any]:
    return {
        "summary": outcome.summary,
        "examined": outcome.examined,
        "unreadable": outcome.unreadable,
        "findings": [
            {
                "rule": f.rule,
                "severity": f.severity.value,
                "title": f.title,
                "message": f.message,
                "location": None if f.location is None else _location_data(f.location),
                "related": [_location_data(r) for r in f.related],
                "failure_sequence": list(f.failure_sequence),
                "anchor": f.anchor,
            }
            for f in outcome.findings
        ],
    }


class _Invalid(Exception):
    pass


def _expect(value: Any, kind: type) -> Any:
    # bool is an int subclass; a line number must not be `true`.
    if type(value) is not kind:
        raise _Invalid(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def _fields(data: Any, names: set[str]) -> dict[str, Any]:
    if type(data) is not dict or set(data) != names:
        raise _Invalid(f"expected an object with fields {sorted(names)}")
    return data


def _location(data: Any) -> Location:
    d = _fields(data, {"path", "line", "end_line", "note"})
    return Location(_expect(d["path"], str), _expect(d["line"], int), _expect(d["end_line"], int), _expect(d["note"], str))


def _finding(data: Any) -> Finding:
    d = _fields(data, {"rule", "severity", "title", "message", "location", "related", "failure_sequence", "anchor"})
    return Finding(
        rule=_expect(d["rule"], str),
        severity=Severity(_expect(d["severity"], str)),
        title=_expect(d["title"], str),
        message=_expect(d["message"], str),
        location=None if d["location"] is None else _location(d["location"]),
        related=tuple(_location(r) for r in _expect(d["related"], list)),
        failure_sequence=tuple(_expect(s, str) for s in _expect(d["failure_sequence"], list)),
        anchor=_expect(d["anchor"], str),
    )


def outcome_from_data(data: Any) -> Outcome:
    """The inverse of `outcome_data`; raises _Invalid (or ValueError) on anything unexpected."""
    d = _fields(data, {"summary", "examined", "unreadable", "findings"})
    return Outcome(
        summary=_expect(d["summary"], str),
        findings=tuple(_finding(f) for f in _expect(d["findings"], list)),
        examined=_expect(d["examined"], int),
        unreadable=_expect(d["unreadable"], str),
    )


def _checksum(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


# -- the store ------------------------------------------------------------------------
class OutcomeCache:
    """Family outcomes under `root`, one JSON file per key."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _path(self, key: str, kind: str = "outcomes") -> Path:
        return self.root / kind / key[:2] / f"{key[2:]}.json"

    def load(self, key: str) -> Outcome | None:
        payload = self.load_payload("outcomes", key)
        if payload is None:
            return None
        try:
            return outcome_from_data(payload)
        except (ValueError, TypeError, _Invalid) as exc:
            log.debug("cache entry %s is corrupt, ignored: %s", self._path(key), exc)
            return None

    def store(self, key: str, outcome: Outcome) -> None:
        """Best effort: a cache that cannot be written only costs time."""
        self.store_payload("outcomes", key, outcome_data(outcome))

    def load_payload(self, kind: str, key: str) -> Any:
        """The plain data stored under (`kind`, `key`), or None when there is none or it does not check
        out (schema, key, checksum): the caller then computes it afresh, as without a cache."""
        path = self._path(key, kind)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.debug("cache entry %s unreadable, ignored: %s", path, exc)
            return None
        try:
            entry = _fields(json.loads(raw), {"schema", "key", "checksum", "outcome"})
            if entry["schema"] != SCHEMA or entry["key"] != key:
                raise _Invalid("schema or key mismatch")
            if entry["checksum"] != _checksum(entry["outcome"]):
                raise _Invalid("checksum mismatch")
            return entry["outcome"]
        except (ValueError, TypeError, _Invalid) as exc:  # json errors are ValueErrors
            log.debug("cache entry %s is corrupt, ignored: %s", path, exc)
            return None

    def store_payload(self, kind: str, key: str, payload: Any) -> None:
        """Best effort, like `store`."""
        entry = {"schema": SCHEMA, "key": key, "checksum": _checksum(payload), "outcome": payload}
        data = json.dumps(entry, sort_keys=True).encode()  # ensure_ascii: lone surrogates survive
        path = self._path(key, kind)
        tmp: str | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            # rename is atomic: a concurrent reader sees the old entry, the new
            # one, or none, never half of one.
            os.replace(tmp, path)
            tmp = None
        except OSError as exc:
            log.debug("cache entry %s not written: %s", path, exc)
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

