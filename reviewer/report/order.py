"""The order findings are reported in: what to fix first.

Within one severity, findings are grouped by root cause and the groups are
ordered by what goes wrong when they are merged (`Impact`: two owners of one
run, lost outcomes, duplicated work, starvation, then hygiene), never by path.

A root cause is read from the findings themselves, not from their names: a
finding that cites another finding's site among its related locations (the
promotion that trusts a newest-row read cites the read) follows from it, and
two findings on the same site share it. The finding cited most is a root (the
construct to change) and every finding citing it is listed beneath it, most
harmful first; then the next most cited among those left, and so on, so a
group is one root and its direct consequences, never a chain. Groups of one
impact keep the order the family lists its checks in (`impact_of` is in
catalog order: a family lists its most harmful check first). Everything is a
pure function of the findings, so the order is deterministic.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterable, Mapping

from reviewer.report.model import Finding, Impact, Location


@dataclass(frozen=True)
class Group:
    """One root cause: the finding to change, and the findings that follow from it."""

    root: Finding
    consequences: tuple[Finding, ...]
    impact: Impact  # the most harmful impact in the group: what places the group

    @property
    def members(self) -> tuple[Finding, ...]:
        return (self.root, *self.consequences)


def _overlaps(a: Location, b: Location) -> bool:
    return a.path == b.path and a.line <= b.end_line and b.line <= a.end_line


def _cites(finding: Finding, other: Finding) -> bool:
    """`finding` names `other`'s site: among its related locations, or as its own site."""
    site = other.location
    if site is None or finding is other:
        return False
    own = finding.location
    if own is not None and (own.path, own.line, own.end_line) == (site.path, site.line, site.end_line):
        return True
    return any(_overlaps(r, site) for r in finding.related)


class _Sites:
    """The findings' own sites by path, sorted by first line, so the findings a
    location overlaps are found by bisection instead of by pairs (a patch can
    bring thousands of findings in one file)."""

    def __init__(self, items: list[Finding]) -> None:
        by_path: dict[str, list[tuple[int, int, int]]] = {}
        for j, f in enumerate(items):
            if f.location is not None:
                by_path.setdefault(f.location.path, []).append((f.location.line, f.location.end_line, j))
        self._starts = {p: [s[0] for s in sorted(v)] for p, v in by_path.items()}
        self._sites = {p: sorted(v) for p, v in by_path.items()}
        self._span = {p: max(end - line for line, end, _ in v) for p, v in by_path.items()}

    def cited_by(self, f: Finding) -> list[int]:
        """Indices of findings whose site one of `f`'s locations overlaps, in index order."""
        found: set[int] = set()
        for loc in (f.location, *f.related):
            if loc is None or loc.path not in self._sites:
                continue
            starts, sites = self._starts[loc.path], self._sites[loc.path]
            lo = bisect.bisect_left(starts, loc.line - self._span[loc.path])
            hi = bisect.bisect_right(starts, loc.end_line)
            found.update(j for line, end, j in sites[lo:hi] if end >= loc.line)
        return sorted(found)


def groups(findings: Iterable[Finding], impact_of: Mapping[str, Impact]) -> tuple[Group, ...]:
    """`findings` of one severity as root-cause groups, most harmful group first."""
    position = {rule: n for n, rule in enumerate(impact_of)}
    items = sorted(findings, key=lambda f: f.sort_key())
    impact = [impact_of.get(f.rule, Impact.HYGIENE) for f in items]
    harm = lambda i: (impact[i].rank, position.get(items[i].rule, len(position)), items[i].sort_key())  # noqa: E731
    sites = _Sites(items)
    citing: list[list[int]] = [[] for _ in items]
    for i, f in enumerate(items):
        for j in sites.cited_by(f):
            if i != j and _cites(f, items[j]):
                citing[j].append(i)
    placed: set[int] = set()
    out = []
    for root in sorted(range(len(items)), key=lambda i: (-len(citing[i]), harm(i))):
        if root in placed:
            continue
        placed.add(root)
        beneath = sorted((i for i in citing[root] if i not in placed), key=harm)
        placed.update(beneath)
        worst = min((root, *beneath), key=harm)
        out.append((harm(worst), harm(root), Group(items[root], tuple(items[i] for i in beneath), impact[worst])))
    return tuple(g for _, _, g in sorted(out, key=lambda t: (t[0], t[1])))


def arrange(findings: Iterable[Finding], impact_of: Mapping[str, Impact]) -> tuple[tuple[Finding, ...], dict[str, str]]:
    """Findings in report order (severity, then groups, then within a group), and
    the root's id of every finding listed beneath one."""
    by_severity: dict[int, list[Finding]] = {}
    for f in findings:
        by_severity.setdefault(f.severity.rank, []).append(f)
    ordered: list[Finding] = []
    roots: dict[str, str] = {}
    for rank in sorted(by_severity):
        for g in groups(by_severity[rank], impact_of):
            ordered.extend(g.members)
            roots.update((c.id, g.root.id) for c in g.consequences)
    return tuple(ordered), roots
