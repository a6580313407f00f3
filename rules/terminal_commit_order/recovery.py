"""The recovery-clears-safe-unreconciled check: recovery reconciles tools before dropping a `safe` claim.

Also decides whether a claim in the safe phase can reach a release at all
(the guards it runs under, judged in a world where the phase is safe).
"""

from __future__ import annotations

from typing import Callable, Iterator

from reviewer.engine import globs
from reviewer.engine.api import Options
from reviewer.report.model import Finding
from reviewer.typescript import Atom, Call, guard_path, mentions_string

from reviewer.rules import _effect as fx
from reviewer.rules.terminal_commit_order.scan import Scan, in_scope


# ------------------------------------------------------------------ check 3: recovery clears safe


def check_recovery(scan: Scan) -> Iterator[Finding]:
    early = scan.early
    opts = scan.opts
    paths = [p for p in scan.changed if globs.matches(p, opts.recovery_paths)]
    checked = 0
    releases = [c for c in fx.iter_calls(scan.program, paths) if fx.matches(c.callee, opts.release)]
    for call in fx.in_key_order(releases):
        if not in_scope(scan, call):
            continue
        if not mentions_safe(scan, call):
            continue
        checked += 1
        if _reconciled_before(scan, call):
            continue
        fn = fx.outer_named(call.enclosing)
        related = [fx.fn_loc(fn, f"`{fn.name}` handles phase `{opts.safe_phase}` without reconciling first")] if fn else []
        related += [fx.call_loc(site, f"`{opts.safe_phase}` can be committed with tools unsettled") for site in early]
        yield (
            scan.ctx.finding(
                "recovery-clears-safe-unreconciled",
                title=f"Recovery drops a `{opts.safe_phase}` claim without reconciling tools",
                message=(
                    f"`{call.callee}` at {call.path}:{call.line} deletes a claim recovered in phase "
                    f"`{opts.safe_phase}` with no {' / '.join(f'`{fx.last(r)}`' for r in opts.reconcile)} before it on "
                    "the same path. A crash between the terminal commit and the tool outcomes leaves tools unsettled "
                    "under a safe claim; reconcile them before the claim is dropped."
                ),
                location=fx.call_loc(call),
                related=fx.unique_sorted(related),
                failure_sequence=[
                    f"a step commits `{opts.safe_phase}` and the process crashes before every tool outcome is durable",
                    f"startup recovery takes the expired claim over and sees phase `{opts.safe_phase}`",
                    f"it calls `{fx.last(call.callee)}` without reconciling tools",
                    "the tool calls stay `running`/unknown for good and nothing revisits them",
                ],
                anchor=call.normalized,
            )
        )
    if paths:
        scan.facts.append(f"{checked} recovery release(s) of `{opts.safe_phase}` claims, each after tool reconciliation")


def mentions_safe(scan: Scan, call: Call) -> bool:
    """Can a claim in the safe phase reach this release?

    The function around the call must name the safe phase at all (as a string);
    then every condition the call runs under (enclosing `if`/`else`, `case`
    labels, early exits like `if (row.phase !== "safe") continue`) must admit a
    row whose phase is safe. A test of anything else admits every row.
    """
    fn = fx.outer_named(call.enclosing) or call.enclosing
    if fn is None:
        return False
    if not mentions_string(fn.expr, scan.opts.safe_phase):  # a lookup, not a walk of the function per release
        return False
    if scan.phase_world is None:
        scan.phase_world = _phase_world(scan.opts)
    # Releases down one `if / else if` chain share their guards: each is judged once.
    return guard_path(call, within=fn).all_admit(scan.phase_world)


def _phase_world(opts: Options) -> Callable[[Atom], bool | None]:
    """Decides comparisons of the phase in a world where it is the safe phase.

    `x === "safe"` holds; `x === "ready"` does not when `x` is the phase
    (`row.phase`, `phase`); any other test is unknown.
    """

    def decide(atom: Atom) -> bool | None:
        if atom.operator not in ("===", "==", "!==", "!=") or atom.right is None:
            return None
        for subject, literal in ((atom.left, atom.right), (atom.right, atom.left)):
            value = literal.string_value
            if value is None:
                continue
            if value == opts.safe_phase:
                equal = True
            elif fx.last(subject.member_path or "") == opts.phase_key:
                equal = False
            else:
                return None
            return equal if atom.operator in ("===", "==") else not equal
        return None

    return decide


def _reconciled_before(scan: Scan, call: Call) -> bool:
    fn = call.enclosing
    if fn is None:
        return False
    if id(fn) not in scan.reconcilers:
        shorts = {fx.last(r) for r in scan.opts.reconcile}
        scan.reconcilers[id(fn)] = [
            other for other in fn.all_calls if other.method in shorts or fx.matches(other.callee, scan.opts.reconcile)
        ]
    return any(other.precedes(call) for other in scan.reconcilers[id(fn)])
