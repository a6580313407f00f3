"""The table a sweep ends with: commits, verdicts, findings per family and severity, slowest commits."""

from __future__ import annotations

from collections import Counter
from typing import Any

from reviewer.report.model import Severity
from reviewer.sweep.run import Outcome
from reviewer.text import plural

SLOWEST = 5


def exit_status(lines: tuple[dict[str, Any], ...]) -> int:
    """0 when every reviewed commit is MERGE; 1 when any is DO-NOT-MERGE or could not be reviewed."""
    return 1 if any(line.get("verdict") == "DO-NOT-MERGE" or line["status"] == "refused" for line in lines) else 0


def render(outcome: Outcome, what: str) -> str:
    lines = outcome.lines
    status = Counter(line["status"] for line in lines)
    verdicts = Counter(line["verdict"] for line in lines if line.get("verdict"))
    out = [f"sweep of {what}: {plural(len(lines), 'commit')}"
           + (f" ({outcome.resumed} from an earlier run)" if outcome.resumed else "")]
    out.append("  " + ", ".join(f"{status[s]} {s}" for s in ("reviewed", "empty", "root", "refused") if status[s])
               if lines else "  nothing to review")
    if verdicts:
        out.append(f"  verdicts: {verdicts['MERGE']} MERGE, {verdicts['DO-NOT-MERGE']} DO-NOT-MERGE")
    out += _families(lines)
    refused = [line for line in lines if line["status"] == "refused"]
    for line in refused[:SLOWEST]:
        out.append(f"  refused {line['commit'][:12]}: {line['reason']}")
    if len(refused) > SLOWEST:
        out.append(f"  … and {len(refused) - SLOWEST} more refused (see the --out file)")
    slowest = sorted(outcome.timed, key=lambda t: (-t[1], t[0]))[:SLOWEST]
    if slowest:
        out.append("  slowest: " + ", ".join(f"{c[:12]} {s:.2f} s" for c, s in slowest))
    return "\n".join(out) + "\n"


def _families(lines: tuple[dict[str, Any], ...]) -> list[str]:
    counts: Counter[tuple[str, str]] = Counter()
    errors: Counter[str] = Counter()
    families: set[str] = set()
    for line in lines:
        for family, status in (line.get("invariants") or {}).items():
            families.add(family)
            if status == "error":
                errors[family] += 1
        for f in line.get("findings") or ():
            family = f["rule"].split("/", 1)[0]
            families.add(family)
            counts[(family, f["severity"])] += 1
    if not families:
        return []
    severities = [s.value for s in Severity]
    width = max(len("family"), *(len(f) for f in families))
    rows = [f"  {'family':<{width}}  " + "  ".join(f"{s:>10}" for s in severities) + f"  {'error':>6}"]
    for family in sorted(families):
        rows.append(f"  {family:<{width}}  " + "  ".join(f"{counts[(family, s)]:>10}" for s in severities)
                    + f"  {errors[family]:>6}")
    return rows
