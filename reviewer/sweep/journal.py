"""The sweep's JSON-lines output, which is also how an interrupted sweep resumes.

Each line is written whole and flushed to disk before the next commit is
reviewed, so after an interruption every complete line is a finished review.
A last line cut short (the process died mid-write) is dropped on resume; a
line written under other settings (rule set, scope, configuration) stops
the resume with a clear message rather than mixing two sweeps in one file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from reviewer.errors import ReviewerError


def encode(line: dict[str, Any]) -> str:
    return json.dumps(line, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def load(path: Path, digest: str) -> dict[str, dict[str, Any]]:
    """Lines already written for this sweep, by commit; the file is trimmed to them."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ReviewerError(f"--out {path}: cannot read ({exc.strerror})") from None
    done: dict[str, dict[str, Any]] = {}
    keep = 0
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        if not raw.endswith(b"\n"):
            break  # cut short by an interruption: reviewed again
        try:
            line = json.loads(raw)
        except (UnicodeDecodeError, ValueError):
            raise ReviewerError(f"--out {path}:{number}: not a sweep line; use another --out file") from None
        if not isinstance(line, dict) or not isinstance(line.get("commit"), str):
            raise ReviewerError(f"--out {path}:{number}: not a sweep line; use another --out file")
        if line.get("sweep") != digest:
            raise ReviewerError(
                f"--out {path}:{number}: written by a sweep with other settings (rule set, --scope or --config); "
                "use another --out file, or --restart to start it again"
            )
        done[line["commit"]] = line
        keep += len(raw)
    if keep != len(data):
        with open(path, "r+b") as fh:
            fh.truncate(keep)
    return done


def open_for_append(path: Path, restart: bool) -> IO[str]:
    try:
        return open(path, "w" if restart else "a", encoding="utf-8")
    except OSError as exc:
        raise ReviewerError(f"--out {path}: cannot write ({exc.strerror})") from None


def append(fh: IO[str], line: dict[str, Any]) -> None:
    fh.write(encode(line))
    fh.flush()
    os.fsync(fh.fileno())
