"""The coordinator's interrupt: where it is defined, and which calls invoke it.

Its cleanup argument runs after the runner's finalizers, so releases there
are allowed; its definition is evidence in several checks' findings.
"""

from __future__ import annotations

from reviewer.report.model import Location
from reviewer.engine.api import Options
from reviewer.typescript import Call

from reviewer.rules import _effect as fx
from reviewer.rules.lease_renewal.scan import Scan


def coordinator_locations(scan: Scan) -> tuple[Location, ...]:
    """The coordinator's interrupt (it finishes interruption and finalizers before its cleanup)."""
    if scan.coordinator is None:
        scan.coordinator = tuple(_find_coordinator(scan))
    return scan.coordinator


def _find_coordinator(scan: Scan) -> list[Location]:
    program = scan.program
    paths = set(scan.changed) | set(fx.imported_paths(program, scan.changed))
    paths |= set(fx.tree_paths(scan.ctx, scan.opts.allowed_release_sites))
    paths |= set(fx.imported_paths(program, paths))
    out: list[Location] = []
    for target in scan.opts.coordinator:
        owner, member = fx.owner(target), fx.last(target)
        for module in fx.modules(program, paths):
            if not module.namespace or not owner or not (module.namespace == owner or module.namespace.endswith(owner)):
                continue
            fn = program.function(module.path, member) or next(
                (f for f in module.functions() if f.name == member), None
            )
            if fn is not None:
                out.append(fx.fn_loc(fn, f"`{module.namespace}.{member}` finishes interruption and the runner's finalizers only here"))
    return out


def is_coordinator_interrupt(call: Call, opts: Options) -> bool:
    """`SessionRunCoordinator.interrupt(..)`, or `coordinator.interrupt(..)` on a coordinator value."""
    for target in opts.coordinator:
        owner, member = fx.owner(target), fx.last(target)
        if call.method != member:
            continue
        if fx.matches(call.callee, (target,)):
            return True
        receiver = fx.owner(call.callee).rsplit(".", 1)[-1].lower()
        if receiver and owner and (owner.lower().endswith(receiver) or receiver.endswith(owner.lower())):
            return True
    return False
