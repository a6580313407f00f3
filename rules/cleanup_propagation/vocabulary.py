"""cleanup-propagation's vocabulary, inferred from the base tree when its defaults name nothing.

A run's durable state is finalized by what releases its claim: the lease
API's release (a function that deletes or clears a row with an owner and an
expiry, lease-renewal's inference) is this family's `finalize`. Terminal
events and cleanup hooks are not inferred; the review says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.engine.api import Proposal
from reviewer.rules.lease_renewal import vocabulary as leases

if TYPE_CHECKING:
    from reviewer.engine.context import Corpus

# The lease inference's hints, read for `finalize` (one fixed-string pass answers both families).
HINTS = tuple((("finalize",) + hint[1:]) for hint in leases.HINTS if hint[0] == "release")


def infer(corpus: "Corpus") -> tuple[Proposal, ...]:
    release = next((p for p in leases.infer(corpus) if p.option == "release"), None)
    looked = "the lease API's release (" + (release.looked_for if release is not None else "not inferred") + ")"
    names = release.names if release is not None else ()
    evidence = release.evidence if release is not None else ()
    return (
        Proposal("finalize", names, evidence, looked),
        Proposal("finalize_events", (), (), "nothing: terminal events are not inferred for cleanup, name them by hand"),
        Proposal("cleanup_hooks", (), (), "nothing: cleanup hooks are not inferred, name them by hand"),
    )
