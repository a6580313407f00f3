"""Resource limits: a hostile or accidental giant patch fails clearly, never hangs.

Defaults leave a real 33-file / 7,000-line patch far inside every bound.
Set them under [limits] in reviewer.toml (base commit) or --config.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from reviewer.changeset import ChangeSet
from reviewer.errors import ReviewerError
from reviewer.model import Check, CheckStatus

# Files the TypeScript model parses: skipping one of these could hide a
# violation, so going over a limit there fails the review instead.
ANALYSED_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


@dataclass(frozen=True)
class Limits:
    max_patch_bytes: int = 64 * 1024 * 1024
    max_files: int = 5_000
    max_file_bytes: int = 4 * 1024 * 1024
    max_line_length: int = 100_000
    rule_seconds: float = 60.0

    @classmethod
    def from_table(cls, table: Mapping[str, Any], source: str) -> "Limits":
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in known:
                raise ReviewerError(f"{source}: [limits] has no option {key!r} (known: {', '.join(sorted(known))})")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ReviewerError(f"{source}: [limits] {key} must be a positive number, got {value!r}")
            values[key] = type(getattr(cls, key))(value)
        return cls(**values)


def check_patch(limits: Limits, patch_bytes: int, files: int) -> list[str]:
    problems = []
    if patch_bytes > limits.max_patch_bytes:
        problems.append(f"the patch is {patch_bytes:,} bytes, over max_patch_bytes {limits.max_patch_bytes:,}")
    if files > limits.max_files:
        problems.append(f"the patch changes {files:,} files, over max_files {limits.max_files:,}")
    return problems


def _longest_line(data: bytes) -> int:
    longest, start = 0, 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return max(longest, len(data) - start)
        longest = max(longest, end - start)
        start = end + 1


def oversized(limits: Limits, changeset: ChangeSet) -> tuple[list[str], list[str]]:
    """(problems in analysed files, notes on other files) for per-file limits."""
    problems: list[str] = []
    notes: list[str] = []
    for f in changeset.files:
        data = f.patched_bytes if f.patched_bytes is not None else f.base_bytes
        if data is None or f.binary:
            continue
        why = None
        if len(data) > limits.max_file_bytes:
            why = f"{f.path}: {len(data):,} bytes, over max_file_bytes {limits.max_file_bytes:,}"
        else:
            longest = _longest_line(data)
            if longest > limits.max_line_length:
                why = f"{f.path}: a line of {longest:,} characters, over max_line_length {limits.max_line_length:,}"
        if why:
            (problems if f.path.endswith(ANALYSED_SUFFIXES) else notes).append(why)
    return problems, notes


def limits_check(problems: list[str]) -> Check:
    if problems:
        return Check("integrity/limits", CheckStatus.FAIL, "; ".join(problems))
    return Check("integrity/limits", CheckStatus.PASS, "within limits")
