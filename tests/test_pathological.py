"""Hostile deep shapes are reviewed, in work that grows linearly with their size.

A patch of 20,000 `.pipe(Effect.orDie)` links once took 3.7 GB and 54 s to
review; other deep shapes crashed a family with RecursionError (`if / else
if`, `||` and ternary chains in a handler, nested namespaces) or made it
quadratic (n catches on one renewal, nested renewals, a cast at every link of
a chain, releases down an `else if` chain).
Each shape below (built by bench/pathological.py, which times the same inputs
through the CLI) is reviewed in process at n and 2n links, and:

- the review concludes: a report, and no family left `error` (a RecursionError
  or an overrun budget would be one);
- doubling the input at most about doubles the work, measured without a
  clock: Python calls made (cProfile's count, deterministic) and the peak of
  the memory the rule families trace (tracemalloc), each less what a
  one-link input costs. Linear work gives a ratio near 2, quadratic near 4;
  the bound is 3.

What neither count sees is time spent inside tree-sitter (a `.parent` costs
the node's depth there); tests/test_typescript_model.py checks that deep
trees answer parent queries from the model's own map instead.
"""

from __future__ import annotations

import cProfile
import gc
import pstats
import sys
import tracemalloc
from pathlib import Path

import pytest

from gitrepo import make_change
from reviewer import review
from reviewer.engine.run import run_families

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import pathological  # noqa: E402  (bench/pathological.py: the shapes, shared with the benchmark)

# (shape, n): every shape is also reviewed at 2n. Sizes keep the file's run
# time under 20 s on two cores; at 2n the recursion shapes (`else if`, `||`
# and ternary chains, nested namespaces) nest deeper than Python's default
# recursion limit of 1,000 frames.
CASES = [
    ("pipe-chain", 1_000),
    ("nested-calls", 500),
    ("member-chain", 800),
    ("binary", 800),
    ("pipe-args", 500),
    ("nested-arrows", 500),
    ("nested-gen", 400),
    ("else-if", 400),
    ("lost-chain", 120),
    ("handler-else-if", 350),
    ("handler-or", 520),
    ("handler-ternary", 520),
    ("nested-namespaces", 520),
    ("nested-renewals", 100),
    ("cast-chain", 300),
    ("recovery-else-if", 200),
]
MAX_RATIO = 3.0


def _work(tmp: Path, shape: str, n: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int, int, review.Reviewed]:
    """(Python calls of the review, peak and retained traced bytes its rule families added, outcome) at `n` links.

    Memory is measured over the families alone (they parse and model the
    files): the review's other peaks (reading git's output, rendering) do not
    grow with the shape and would hide the model's growth at these sizes.
    """
    path, content = pathological.SHAPES[shape][0](n)
    repo, base, patch, _ = make_change(tmp / f"{shape}-{n}", dict(pathological.BASE), {path: content})
    request = review.Request(repo=str(repo.path), base=base, patch=str(patch))
    added: list[tuple[int, int]] = []

    def measured(*args, **kwargs):  # type: ignore[no-untyped-def]
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        try:
            return run_families(*args, **kwargs)
        finally:
            current, peak = tracemalloc.get_traced_memory()
            added.append((peak - before, current - before))

    monkeypatch.setattr(review, "run_families", measured)
    gc.collect()
    profile = cProfile.Profile()
    tracemalloc.start()
    try:
        profile.enable()
        try:
            outcome = review.run(request)
        finally:
            profile.disable()
    finally:
        tracemalloc.stop()
    assert len(added) == 1, "the review ran its rule families once"
    return pstats.Stats(profile).total_calls, added[0][0], added[0][1], outcome


@pytest.mark.parametrize(("shape", "n"), CASES, ids=[shape for shape, _ in CASES])
def test_deep_shape_is_reviewed_in_linear_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str, n: int
) -> None:
    # What a one-link input costs (git, configuration, rendering; the memory its
    # model keeps) is taken off both sizes so that it does not flatten the ratio.
    # Not its peak: a fixed transient peak is not added to a larger model's, it
    # is hidden under it.
    base_calls, _, base_kept, _ = _work(tmp_path, shape, 1, monkeypatch)
    small_calls, small_peak, _, _ = _work(tmp_path, shape, n, monkeypatch)
    calls, peak, _, outcome = _work(tmp_path, shape, 2 * n, monkeypatch)

    report = outcome.report
    assert report.verdict.value in ("MERGE", "DO-NOT-MERGE")
    errors = {i.id: i.summary for i in report.invariants if i.status.value == "error"}
    assert not errors, f"{shape} at {2 * n} links: families did not conclude: {errors}"

    grown = (calls - base_calls) / max(small_calls - base_calls, 1)
    assert grown < MAX_RATIO, (
        f"{shape}: {small_calls - base_calls:,} Python calls for {n} links, {calls - base_calls:,} for {2 * n} "
        f"(x{grown:.2f}: worse than linear)"
    )
    grown = (peak - base_kept) / max(small_peak - base_kept, 1)
    assert grown < MAX_RATIO, (
        f"{shape}: the families' peak traced memory grew {(small_peak - base_kept) / 1e6:.1f} MB for {n} links, "
        f"{(peak - base_kept) / 1e6:.1f} MB for {2 * n} (x{grown:.2f}: worse than linear)"
    )
