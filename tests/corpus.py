"""Code bases of our own in vocabularies unlike opencode's (tests/codebases/<name>/).

Each has a `base/` tree and `cases/<case>/patched/` overlays, one patch each,
annotated like the rule fixtures (`// ruleid:` / `// ok:`, or `EXPECT` lines
for JSON and SQL). `EXPECT` also records what the bot is known to get wrong:

    miss: lease-renewal/lost-suppressed src/worker.ts:12   # why it is missed
    noise: bounded-scan/unbounded src/boot.ts:9            # why it is reported

A case's result counts, per family, the true findings (annotated and reported),
the misses (annotated, not reported) and the false alarms (reported, not
annotated). Only blocking findings count; regression-evidence's findings are
derived from the others' and are not counted. No reviewer.toml: the bot must
find its way by what the code does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitrepo import make_change
from reviewer import review
from test_rule_fixtures import _annotations, _read_tree

CODEBASES = Path(__file__).parent / "codebases"
DERIVED = ("regression-evidence/",)
Key = tuple[str, str, int]


@dataclass(frozen=True)
class Expected:
    ruleid: frozenset[Key]
    miss: frozenset[Key]  # subset of ruleid: known not to be found
    noise: frozenset[Key]  # reported, known false


@dataclass(frozen=True)
class CaseResult:
    case: str
    expected: Expected
    reported: frozenset[Key]

    def family_counts(self) -> dict[str, tuple[int, int, int]]:
        """family -> (true findings, misses, false alarms)."""
        out: dict[str, list[int]] = {}
        for rule, *_ in self.expected.ruleid | self.reported:
            out.setdefault(rule.split("/")[0], [0, 0, 0])
        for key in self.expected.ruleid:
            out[key[0].split("/")[0]][0 if key in self.reported else 1] += 1
        for key in self.reported - self.expected.ruleid:
            out[key[0].split("/")[0]][2] += 1
        return {f: (c[0], c[1], c[2]) for f, c in sorted(out.items())}


def codebases() -> list[Path]:
    return sorted(p for p in CODEBASES.iterdir() if (p / "base").is_dir())


def cases(codebase: Path) -> list[Path]:
    return sorted(p for p in (codebase / "cases").iterdir() if (p / "patched").is_dir())


def expected(case: Path, patched: dict[str, bytes]) -> Expected:
    ruleid: set[Key] = set()
    for path, data in patched.items():
        try:
            found, _ = _annotations(path, data.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        ruleid |= found
    lines: dict[str, set[Key]] = {"ruleid": set(), "miss": set(), "noise": set()}
    expect = case / "EXPECT"
    for raw in expect.read_text().splitlines() if expect.exists() else ():
        line = raw.split("#", 1)[0].strip()
        kind, _, rest = line.partition(":")
        if kind.strip() in lines:
            rule, _, where = rest.strip().partition(" ")
            path, _, number = where.strip().rpartition(":")
            lines[kind.strip()].add((rule, path, int(number)))
    ruleid |= lines["ruleid"] | lines["miss"]
    return Expected(frozenset(ruleid), frozenset(lines["miss"]), frozenset(lines["noise"]))


def run(codebase: Path, case: Path, tmp: Path) -> CaseResult:
    base = _read_tree(codebase / "base")
    changed = _read_tree(case / "patched")
    patched = {**base, **changed}
    repo, base_sha, patch, _ = make_change(tmp, base, patched)
    report = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch))).report
    reported = frozenset(
        (f.rule, f.location.path, f.location.line)
        for f in report.findings
        if f.severity.value != "consider" and f.location is not None and not f.rule.startswith(DERIVED)
    )
    # Annotations in unchanged base files say nothing about this patch: only the overlay's count.
    return CaseResult(case.name, expected(case, changed), reported)
