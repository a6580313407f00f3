"""regression-evidence: every must-fix finding and every changed guard has a test that runs it.

Issue 16, family 4 (the seed review's regression-coverage audit). It runs after
the other families (`Family.after_findings`) and reads their results from
`ctx.prior`. For each must-fix finding located in production TypeScript, and
each guard the patch changed (`targets`: commit hooks, compare-and-set `where`
predicates, lease renewal schedules), it asks whether a test the patch changed
exercises the code (`exercise`: imports its module, directly or through one
re-export, and refers to the declaration around it or to one that reaches it).
Targets in one declaration share one finding: one test of that declaration
answers for all of them.

This package: the declarations (`spec`), workspace package resolution
(`packages`), the targets (`targets`), the exercise question (`exercise`),
and here the family on the engine's template and the messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from reviewer.engine import globs
from reviewer.engine.api import Family
from reviewer.engine.template import Reading, Template, changed_hunks
from reviewer.report.model import Finding, Location
from reviewer.typescript import Call, Program, names_in

from reviewer.rules import _effect as fx
from reviewer.rules.regression_evidence.exercise import Exercise, Verdict, declarations_around, first_test_case
from reviewer.rules.regression_evidence.packages import Resolver, read_packages
from reviewer.rules.regression_evidence.spec import CHECKS, FAMILY_ID, OPTIONS
from reviewer.rules.regression_evidence.targets import Target, finding_targets, guard_targets

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext

_PACKAGES_MEMO = "regression-evidence:packages"


@dataclass
class Run:
    """One run's state: the changed tests, what they must exercise, and what was found of it."""

    ctx: "ReviewContext"
    changed: tuple[str, ...] = ()  # the changed test files (set by the template)
    production: tuple[str, ...] = ()  # the changed production files
    targets: list[Target] = field(default_factory=list)
    groups: list[list[Target]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)  # `target exercised by test (how)`
    untested: int = 0
    unproven: int = 0

    def is_test(self, path: str) -> bool:
        return globs.matches(path, self.ctx.opts.test_globs)


def _tests(run: Run) -> tuple[str, ...]:
    ctx = run.ctx
    changed = ctx.changeset.source_paths()
    run.production = tuple(p for p in changed if not run.is_test(p) and ctx.patched.exists(p))
    return tuple(p for p in changed if run.is_test(p) and ctx.patched.exists(p))


def _prepare(run: Run) -> None:
    ctx = run.ctx
    targets = finding_targets(ctx.prior, FAMILY_ID, lambda p: fx.is_source(p) and not run.is_test(p),
                              lambda f: _in_change(ctx, f))
    # A guard on the lines of a must-fix finding is that finding's code: one question, asked once.
    found = list(targets)
    targets += [g for g in guard_targets(ctx.program, ctx.base_program, run.production, ctx.opts)
                if not any(t.path == g.path and t.line <= g.line and g.end_line <= t.end_line for t in found)]
    run.targets = targets
    run.groups = _groups(ctx.program, targets) if targets else []


def _exercised(run: Run) -> Iterator[Finding]:
    """untested-finding, untested-guard, exercise-unproven, exercise-unresolved: one question per declaration."""
    if not run.targets:
        return
    ctx, program, tests = run.ctx, run.ctx.program, run.changed
    memo = program.memo(_PACKAGES_MEMO)
    if "packages" not in memo:
        memo["packages"] = read_packages(ctx.patched.paths(), ctx.patched.text)
    resolver = Resolver(program, memo["packages"], ctx.patched.exists)
    exercise = Exercise(program, resolver, tests, ctx.opts.max_depth)
    for group in run.groups:
        first = group[0]
        verdict = exercise.verdict(first.path, first.line, first.end_line)
        if verdict.exercised_by is not None:
            test, how = verdict.exercised_by
            run.facts.append(f"{_short(first)} exercised by {test} ({how})")
            continue
        if verdict.importing or verdict.loading is not None:
            # Imported but not shown to run it: a registry or a layer built elsewhere may still reach
            # it, so this is a note for a reviewer, never a blocking claim.
            run.unproven += 1
            yield _unproven(ctx, exercise, group, verdict)
            continue
        run.untested += 1
        yield _finding(ctx, exercise, group, verdict, tests)
    if run.untested:
        yield from _unresolved(ctx, exercise, tests)


def _unexamined(run: Run, findings: tuple[Finding, ...]) -> str:
    opts = run.ctx.opts
    return (
        "no must-fix finding of another family in production TypeScript and no changed guard "
        f"(`{'`/`'.join(opts.guard_hooks)}` hook, compare-and-set `where` on "
        f"{'/'.join(opts.cas_tables)}, lease renewal schedule) in {len(run.production)} changed production file(s)"
    )


def _proved(run: Run, findings: tuple[Finding, ...]) -> str:
    targets, facts = run.targets, run.facts
    n_findings = sum(1 for t in targets if t.finding is not None)
    basis = (f"{n_findings} must-fix finding(s) and {len(targets) - n_findings} changed guard(s) in "
             f"{len(run.groups)} declaration(s) against {len(run.changed)} changed test file(s)")
    if len(facts) > 4:
        facts = facts[:4] + [f"{len(facts) - 4} more"]
    counts = [f"{run.untested} no changed test can run"] if run.untested else []
    counts += [f"{run.unproven} not shown to be run (see the notes)"] if run.unproven else []
    exercised = f"exercised: {'; '.join(facts)}" if facts else ""
    return f"{basis}: " + "; ".join(counts + [exercised] if exercised else counts)


TEMPLATE = Template(
    reading=Reading(
        idioms="test",
        unchecked="calls to production code",
        region_title="Unparsed region in a changed test",
        tokens=lambda opts: (),  # a region of a test hides a call, never a violation: a note, never `error`
        paths=_tests,
    ),
    nothing=None,  # no changed test is itself what the family reports
    start=Run,
    prepare=_prepare,
    checks=(_exercised,),
    examined=lambda run: len(run.targets),
    unexamined=_unexamined,
    proved=_proved,
    phrases=None,  # the basis counts what no changed test can run
    notes_everywhere=True,
)


def _in_change(ctx: "ReviewContext", finding: Finding) -> bool:
    if ctx.widened:
        return True
    files = ctx.changeset.by_path
    places = (finding.location, *finding.related) if finding.location is not None else finding.related
    return any(p.path in files and files[p.path].touches(p.line, p.end_line) for p in places)


def _groups(program: Program, targets: list[Target]) -> list[list[Target]]:
    """Targets by the declaration around them (one test of it answers for all), must-fix findings first."""
    groups: dict[tuple[str, tuple[str, ...]], list[Target]] = {}
    for target in targets:
        module = program.module(target.path)
        around = tuple(sorted(declarations_around(module, target.line, target.end_line))) if module else ()
        key = (target.path, around) if around else (target.path, (f"@{target.line}",))
        groups.setdefault(key, []).append(target)
    ordered = [sorted(g, key=lambda t: (t.finding is None, t.line, t.end_line, t.anchor)) for g in groups.values()]
    return sorted(ordered, key=lambda g: (g[0].path, g[0].line, g[0].anchor))


def _short(target: Target) -> str:
    return f"{target.path}:{target.line}"


def _finding(ctx: "ReviewContext", exercise: Exercise, group: list[Target], verdict: Verdict, tests: tuple[str, ...]) -> Finding:
    first = group[0]
    check = "untested-finding" if first.finding is not None else "untested-guard"
    module = exercise.program.module(first.path)
    around = sorted(declarations_around(module, first.line, first.end_line)) if module else []
    decl = f"`{around[-1]}`" if around else "its code"
    more = f" (and {len(group) - 1} more in the same declaration)" if len(group) > 1 else ""
    if not tests:
        reason = "the patch changes no test"
    else:
        reason = f"no test it changes imports `{first.path}` or loads it through the modules it imports"
    message = (
        f"No test changed by the patch exercises {first.what}{more} at {first.path}:{first.line}: {reason}. "
        f"Add a regression test that imports the production module and runs {decl} on the failing path, "
        "rather than a test-local stand-in."
    )
    related: list[Location] = [
        fx.loc(t.path, t.line, t.end_line, f"also untested here: {t.what}") for t in group[1:]
    ]
    nearest = _nearest(ctx, exercise, first.path, verdict, tests)
    if nearest is not None:
        related.append(nearest)
    title = "No regression test exercises the code of a must-fix finding" if first.finding else "No regression test exercises a changed guard"
    return ctx.finding(
        check,
        title=title,
        message=message,
        location=fx.loc(first.path, first.line, first.end_line),
        related=related,
        anchor=f"{check}:{','.join(around) or first.anchor}:{first.anchor}",
    )


def _unproven(ctx: "ReviewContext", exercise: Exercise, group: list[Target], verdict: Verdict) -> Finding:
    first = group[0]
    module = exercise.program.module(first.path)
    around = sorted(declarations_around(module, first.line, first.end_line)) if module else []
    decl = f"`{around[-1]}`" if around else "its code"
    if verdict.importing:
        test = verdict.importing[0]
        refs = sorted(exercise.references(test, first.path))
        shown = ", ".join(f"`{r}`" for r in refs[:4]) + (f" and {len(refs) - 4} more" if len(refs) > 4 else "")
        refers = f"refers only to {shown}" if refs else "refers to none of its declarations"
        how = f"`{test}` imports `{first.path}` but {refers}, and the reviewer cannot follow any of them to {decl}"
    else:
        assert verdict.loading is not None
        test, kind = verdict.loading
        how = (
            f"`{test}` does not import `{first.path}` itself but loads it through other modules (or an entry "
            "point it names), so the reviewer cannot tell whether it runs " + decl
            if kind == "indirect"
            else f"`{test}` loads more modules than the reviewer follows, so whether it runs {decl} is unknown"
        )
    message = (
        f"{how}, which holds {first.what} at {first.path}:{first.line}. Confirm the test reaches it (a registry, "
        f"a layer built elsewhere or a spawned process may), or call {decl} from the test."
    )
    nearest = _nearest(ctx, exercise, first.path, verdict, (test,))
    return ctx.finding(
        "exercise-unproven",
        title="A changed test imports the module but is not shown to run the code",
        message=message,
        location=fx.loc(first.path, first.line, first.end_line),
        related=[nearest] if nearest is not None else [],
        anchor=f"exercise-unproven:{','.join(around) or first.anchor}:{first.anchor}",
    )


def _nearest(ctx: "ReviewContext", exercise: Exercise, production: str, verdict: Verdict, tests: tuple[str, ...]) -> Location | None:
    """The test the patch changed that is closest to the production file: one importing it, else the one
    sharing the longest directory prefix; pointed at its first changed test case (else its first changed lines)."""
    if not tests:
        return None
    if verdict.importing:
        test = verdict.importing[0]
    else:
        test = max(tests, key=lambda t: (_has_case(exercise, t, ctx.opts.test_cases), _common(t, production),
                                         [-ord(c) for c in t]))
    module = exercise.program.module(test)
    locals_ = tuple(b.local for b in exercise.bindings(test, production))
    case = first_test_case(module, ctx.opts.test_cases, locals_) if module is not None else None
    imports = "imports the module but runs other code" if verdict.importing else "does not import the module"
    stand_in = " with a test-local `Effect.never` stand-in" if case is not None and _never(case) else ""
    note = f"nearest test the patch changed ({imports}){stand_in}"
    if case is not None:
        return fx.call_loc(case, note)
    hunks = changed_hunks(ctx, test, note)
    return hunks[0] if hunks else None


def _has_case(exercise: Exercise, test: str, names: tuple[str, ...]) -> bool:
    """A changed test case in the file (a helper under `test/` has none)."""
    module = exercise.program.module(test)
    return module is not None and first_test_case(module, names, ()) is not None


def _never(case: Call) -> bool:
    """The test case names `never` (`Effect.never`): a run that only waits, standing in for production code."""
    return "never" in names_in(case)


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/")):
        if x != y:
            break
        n += 1
    return n


def _unresolved(ctx: "ReviewContext", exercise: Exercise, tests: tuple[str, ...]) -> list[Finding]:
    out = []
    for test in tests:
        specs = exercise.unresolved(test)
        if not specs:
            continue
        hunks = changed_hunks(ctx, test, "the patch changed this test here")
        shown = ", ".join(f"`{s}`" for s in specs)
        out.append(
            ctx.finding(
                "exercise-unresolved",
                title="A changed test imports a workspace module the reviewer cannot resolve",
                message=(
                    f"{test} imports {shown}, which names a package of this repository but matches no file through "
                    "its `package.json` `exports`; whether that import runs the untested code above was not checked."
                ),
                location=hunks[0] if hunks else fx.loc(test, 1, 1),
                anchor=f"exercise-unresolved:{test}:{','.join(specs)}",
            )
        )
    return out


FAMILY = Family(
    id=FAMILY_ID,
    summary="Every must-fix finding and every changed recovery guard is exercised by a test the patch changed.",
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
    after_findings=True,
)
