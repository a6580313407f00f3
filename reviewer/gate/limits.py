"""Resource limits: a hostile or accidental giant patch fails clearly, never hangs.

Defaults leave a real 33-file / 7,000-line patch far inside every bound.
Set them under [limits] in reviewer.toml (base commit) or --config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Mapping

from reviewer.change.changeset import TYPESCRIPT_ONLY_SUFFIXES, ChangeSet, is_source
from reviewer.errors import ReviewerError
from reviewer.report.model import Check, CheckStatus

# Files the TypeScript model parses: skipping one of these could hide a
# violation, so going over a limit there fails the review instead.

# TOML's own integer range: anything larger is a typo, not a bound.
INT_MAX = 2**63 - 1
# Time budgets arm setitimer, which overflows a platform time_t well below
# 1e10 s; a day is already far beyond any real review.
MAX_SECONDS = 86_400.0


def shown(value: Any, width: int = 60) -> str:
    """A configured value as an error message quotes it: repr, one line, cut short."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def is_integer(value: Any) -> bool:
    # TOML booleans are Python ints; `max_files = true` is a mistake, not 1.
    return isinstance(value, int) and not isinstance(value, bool)


def is_finite_number(value: Any) -> bool:
    if is_integer(value):
        return abs(value) <= INT_MAX
    return isinstance(value, float) and math.isfinite(value)


@dataclass(frozen=True)
class Limits:
    max_patch_bytes: int = 64 * 1024 * 1024
    max_files: int = 5_000
    max_file_bytes: int = 4 * 1024 * 1024
    max_line_length: int = 100_000
    rule_seconds: float = 60.0
    # The whole review (reading the patch, the gate, reconstruction, every
    # family, suppressions): nothing that reads patch text runs unbounded.
    review_seconds: float = 900.0

    @classmethod
    def from_table(cls, table: Mapping[str, Any], source: str) -> "Limits":
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in table.items():
            if key not in known:
                raise ReviewerError(f"{source}: [limits] has no option {key!r} (known: {', '.join(sorted(known))})")
            values[key] = _limit(key, getattr(cls, key), value, source)
        return cls(**values)


def _limit(key: str, default: int | float, value: Any, source: str) -> int | float:
    """`value` for the limit `key`, or a one-line error: a NaN, infinite, zero or
    fractional bound would silently turn its check off (every comparison with
    NaN is false) or crash whatever consumes it."""
    if isinstance(default, int):
        if is_integer(value) and 0 < value <= INT_MAX:
            return value
        raise ReviewerError(f"{source}: [limits] {key} must be a positive integer, got {shown(value)}")
    # The float limits are time budgets in seconds.
    if is_finite_number(value) and 0 < value <= MAX_SECONDS:
        return float(value)
    raise ReviewerError(
        f"{source}: [limits] {key} must be a positive number of seconds, at most {MAX_SECONDS:g}, got {shown(value)}"
    )


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


def file_limits(limits: Limits, changeset: ChangeSet) -> tuple[list[str], list[str]]:
    """(problems in analysed files, notes on other files) for per-file limits.

    A TypeScript file the model cannot read as UTF-8 text (a NUL byte, an
    invalid sequence) is a problem like an oversized one: skipping it would
    turn every family blind to it, and JavaScript allows any byte in a comment.
    """
    problems: list[str] = []
    notes: list[str] = []
    for f in changeset.files:
        data = f.patched_bytes if f.patched_bytes is not None else f.base_bytes
        if data is None:
            continue
        # declaration files are read too (types the model resolves through)
        analysed = (is_source(f.path) or f.path.endswith(TYPESCRIPT_ONLY_SUFFIXES)) and f.new_mode != "120000"
        why = _unreadable(f.path, f.patched_bytes) if analysed else None
        if why is None and f.binary:
            continue
        if why is None and len(data) > limits.max_file_bytes:
            why = f"{f.path}: {len(data):,} bytes, over max_file_bytes {limits.max_file_bytes:,}"
        elif why is None:
            longest = _longest_line(data)
            if longest > limits.max_line_length:
                why = f"{f.path}: a line of {longest:,} characters, over max_line_length {limits.max_line_length:,}"
        if why:
            (problems if analysed else notes).append(why)
    return problems, notes


def _unreadable(path: str, data: bytes | None) -> str | None:
    if data is None:
        return None
    nul = data.find(b"\0")
    if nul != -1:
        return f"{path}: a NUL byte at offset {nul:,}; the rules cannot read it as TypeScript"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{path}: not valid UTF-8 at byte {exc.start:,}; the rules cannot read it as TypeScript"
    return None


def limits_check(problems: list[str]) -> Check:
    if problems:
        return Check("integrity/limits", CheckStatus.FAIL, "; ".join(problems))
    return Check("integrity/limits", CheckStatus.PASS, "within limits")
