"""Recall and precision per family on the corpus code bases (tests/codebases/, tests/corpus.py).

    python bench/codebases.py

For each code base of our own (no reviewer.toml, vocabularies unlike
opencode's), every case is reviewed as a patch to its base; per family it
counts the annotated defects found, those missed, and the false alarms
(blocking findings that are not annotated), and prints one table per code
base and a total. The test suite asserts the same results case by case
(tests/test_codebases.py); this prints them as figures for bench/PRECISION.md.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE.parent))

from corpus import cases, codebases, run  # noqa: E402


def _ratio(num: int, den: int) -> str:
    return f"{num}/{den}" if den else "—"


def main() -> int:
    totals: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory(prefix="codebases-") as tmp:
        for cb in codebases():
            per: dict[str, list[int]] = {}
            clean = looked = 0
            for case in cases(cb):
                result = run(cb, case, Path(tmp, cb.name, case.name))
                looked += case.name.startswith("ok-")
                clean += case.name.startswith("ok-") and not (result.reported - result.expected.ruleid)
                for family, counts in result.family_counts().items():
                    row = per.setdefault(family, [0, 0, 0])
                    for k in range(3):
                        row[k] += counts[k]
            print(f"\n{cb.name}: {len(cases(cb))} cases, {looked} look-alikes ({clean} without a false alarm)\n")
            print("| family | defects found | false alarms | recall | precision |")
            print("|---|---:|---:|---:|---:|")
            for family, (tp, fn, fp) in sorted(per.items()):
                print(f"| {family} | {tp} of {tp + fn} | {fp} | {_ratio(tp, tp + fn)} | {_ratio(tp, tp + fp)} |")
                total = totals.setdefault(family, [0, 0, 0])
                for k, v in enumerate((tp, fn, fp)):
                    total[k] += v
    tp, fn, fp = (sum(v[k] for v in totals.values()) for k in range(3))
    print(f"\nall code bases: {tp} of {tp + fn} defects found, {fp} false alarms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
