"""A success-after-failure finding names the failure on the success's own path, not merely the first.

Two failure terminals precede the success; the one a maintainer must look at is the one that runs
under the conditions the success runs under (on opencode's history the first one written made
the provider report a failure, which skips the success, and the real path was the second).
"""

from __future__ import annotations

from pathlib import Path

from test_rule_fixtures import FIXTURES, run_case

CASE = FIXTURES / "terminal-commit-order" / "success-after-failure-names-the-path"


def test_the_failure_sharing_the_success_conditions_is_named(tmp_path: Path) -> None:
    outcome, _ = run_case(CASE, tmp_path)
    found = sorted((f for f in outcome.report.findings if f.rule == "terminal-commit-order/success-after-failure"),
                   key=lambda f: f.location.line)
    assert [f.location.line for f in found] == [25, 36]
    # The second reads its condition through `const`s: `endedCleanly` holds `!providerFailed`, which is
    # `!provider.failed()`, the condition the thrown failure runs under too.
    for finding, line in zip(found, (22, 32)):
        assert f"`failThrown` (Step.Failed) at line {line}" in finding.message, finding.message
        named = [r for r in finding.related if r.note == "the failure terminal published first on the same path"]
        assert [r.line for r in named] == [line]
