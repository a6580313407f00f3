"""The lost-suppressed check: a lost claim (SessionExecutionClaim.Lost) fails closed.

Finds catches and ignores that can see a lost claim and judges whether their
handler turns it into success, reading the guards a handler tests its error
with.
"""

from __future__ import annotations

from typing import Callable, Iterator

from reviewer.report.model import Finding, Location
from reviewer.engine.api import Options
from reviewer.typescript import Atom, Call, Exit, Expr, Program, exits, mentions_string, returned_functions, succeeds

from reviewer.rules import _effect as fx
from reviewer.rules._escape import swallowed
from reviewer.rules.lease_renewal.coordinator import is_coordinator_interrupt
from reviewer.rules.lease_renewal.giveup import gives_up, renews_nothing
from reviewer.rules.lease_renewal.loops import loops_in
from reviewer.rules.lease_renewal.scan import Scan


def mentions_lost(expr: Expr, opts: Options) -> bool:
    """A lost tag as a string (`"Lost"`), an object key (`{ Lost: .. }`) or a class reference."""
    shorts = {fx.last(tag) for tag in opts.lost_tags}
    # Asked of every catch handler, and handlers nest: each question is a lookup, not a walk of the handler.
    return any(mentions_string(expr, short) or fx.mentions(expr, short) for short in shorts)


# ------------------------------------------------------------------ check 3: lost suppressed


def check_lost(scan: Scan) -> Iterator[Finding]:
    program, opts = scan.program, scan.opts
    seen = fx.KeySet()  # `fx.key` triples of calls and stages already reported
    counted = 0
    # Handlers are found before sorting: the sort key normalises calls that share a
    # line, and only catches that can see a lost claim need an order.
    handlers: dict[int, tuple[Expr, str]] = {}
    catches: list[Call] = []
    for call in fx.iter_calls(program, scan.changed):
        handler, why = _lost_handler(scan, call)
        if handler is not None:
            handlers[id(call)] = (handler, why)
            catches.append(call)
    for call in fx.in_key_order(catches):
        handler, why = handlers[id(call)]
        counted += 1
        if not (call.changed or handler.changed or scan.widened) or call in seen:
            continue
        lost_succeeds = _lost_branch_succeeds(program, handler, opts)
        if fx.handler_fails(program, handler, opts.fail) and not lost_succeeds:
            continue
        if not fx.may_succeed(program, handler, opts.success) and not lost_succeeds:
            continue
        subject = _subject(scan, call)
        if subject is not None and _closed_otherwise(scan, subject, handler, call):
            continue
        seen.add(call)
        yield _lost_finding(scan, call, why, subject)
    # `renew(..).pipe(Effect.ignore)`, `Effect.either(renew(..))`, `Effect.race(renew(..), other)`,
    # `Effect.retry(renew(..), Schedule.forever)`: no handler to judge, the channel table says it
    claim_calls = [c for c in fx.iter_calls(program, scan.changed) if scan.is_renew(c) or scan.is_release(c)]
    for call in fx.in_key_order(claim_calls):
        swallow = swallowed(program, call, opts.fail, opts.ignore)
        if swallow is None:
            continue
        counted += 1
        if not (swallow.stage.changed or call.changed or scan.widened):
            continue
        if swallow.stage in seen or swallow.at in seen:
            continue
        if _closed_otherwise(scan, call, None, None):
            continue
        seen.add(swallow.stage)
        yield (
            _lost_finding(scan, swallow.at, swallow.why, call, swallow.stage, handler="nothing fails closed")
        )
    scan.facts.append(
        f"{counted} catch/ignore site(s) that can see Lost, none turning it into success" if counted else "no catch/ignore of Lost"
    )


def _closed_otherwise(scan: Scan, subject: Call, handler: Expr | None, catch: Call | None) -> bool:
    """A swallowed failure that still fails closed: the renewal renews nothing (a probe), or the handler
    gives up what the renewal holds (giveup.py). Said in the basis, never silent."""
    if renews_nothing(scan.program, subject):
        scan.facts.append(f"`{subject.callee}` at {subject.path}:{subject.line} renews an empty list (a probe): its failure holds nothing")
        return True
    if handler is None:
        return False
    found = gives_up(scan.program, handler, subject, catch, tuple(scan.opts.fail))
    if found is None:
        return False
    scan.facts.append(f"the handler at {catch.path}:{catch.line} gives the claim up: {found.describe()}" if catch else found.describe())
    return True


def _lost_handler(scan: Scan, call: Call) -> tuple[Expr | None, str]:
    """The handler of a catch that can see a lost claim, and how it sees it."""
    opts = scan.opts
    if not scan.is_catch(call):
        return None, ""  # decided before reading the arguments: most calls are not catches
    args = tuple(fx.written(scan.program, a) for a in call.args)
    if not args:
        return None, ""
    if fx.matches(call.callee, opts.catch_tag):
        tags = [t for t in (_tag(scan.program, a) for a in args[:-1]) if t is not None]
        if any(fx.matches(t, opts.lost_tags) or t in {fx.last(x) for x in opts.lost_tags} for t in tags):
            return args[-1], f"`{fx.strip_call_marks(call.callee)}(\"{tags[0]}\", ..)` catches the lost claim"
        return None, ""
    if fx.matches(call.callee, opts.catch_tags):
        shorts = {fx.last(x) for x in opts.lost_tags}
        for arg in args:
            for name, value in arg.props:
                if name in shorts:
                    value = fx.written(scan.program, value)
                    return value, f"`{fx.strip_call_marks(call.callee)}({{ {name}: .. }})` catches the lost claim"
        return None, ""
    if fx.matches(call.callee, opts.catch_all):
        handler = args[-1]
        on_failure = call.args[-1].prop("onFailure")  # `matchEffect({ onFailure, onSuccess })`
        if on_failure is not None:
            handler = fx.written(scan.program, on_failure)
        if mentions_lost(handler, opts):
            return handler, f"`{fx.strip_call_marks(call.callee)}` singles out the lost claim"
        if _subject(scan, call) is not None:
            return handler, f"`{fx.strip_call_marks(call.callee)}` catches every failure, a lost claim included,"
    return None, ""


def _tag(program: Program, arg: Expr) -> str | None:
    """A tag argument's value: a literal, or a constant expression that folds to a string
    (`"Lo" + "st"`, a `const` of it, a template of constants)."""
    if arg.string_value is not None:
        return arg.string_value
    value = program.fold(arg)
    return value if isinstance(value, str) else None


def _subject(scan: Scan, catch: Call) -> Call | None:
    """The renew/release call this catch is applied to (as a pipe stage or data-first)."""
    if catch.path not in scan.subjects:
        table: dict[int, Call] = {}
        for call in fx.iter_calls(scan.program, [catch.path]):
            if scan.is_renew(call) or scan.is_release(call):
                for stage in fx.stages_of(call):
                    if stage.call is not None:
                        table.setdefault(id(stage.call), call)
        scan.subjects[catch.path] = table
    return scan.subjects[catch.path].get(id(catch))


def _lost_branch_succeeds(program: Program, handler: Expr, opts: Options) -> bool:
    """The handler tests for Lost and produces success on a path only Lost takes.

    `if (!(e instanceof Lost)) return Effect.die(e)` followed by a success,
    `e instanceof Lost ? Effect.void : ..`, `if (e._tag === "Lost") return Effect.void`,
    `if (Lost.is(e)) return` all qualify; the test may be written across lines.
    """
    function = program.function_of(handler)
    if function is None:
        return False
    shorts = frozenset(fx.last(t) for t in opts.lost_tags)
    lost, other = _lost_world(program, shorts, True), _lost_world(program, shorts, False)
    for end in exits(function):
        # Exits share the guards around them: `all_admit` judges each shared prefix once.
        only_lost = end.guards.all_admit(lost) and not end.guards.all_admit(other)
        if only_lost and _exit_succeeds(end, opts):
            return True
    return False


def _lost_world(program: Program, shorts: frozenset[str], is_lost: bool) -> Callable[[Atom], bool | None]:
    """Decides the tests a handler makes of its error, in a world where it is (or is not) Lost."""

    def tagged(tag: str | None) -> bool | None:
        if tag is None:
            return None
        return tag in shorts if is_lost else (False if tag in shorts else None)

    def decide(atom: Atom) -> bool | None:
        if atom.operator == "instanceof" and atom.right is not None:
            return is_lost if fx.last(fx.ref_name(atom.right) or "") in shorts else None
        if atom.operator in ("===", "==", "!==", "!=") and atom.right is not None:
            equal = tagged(_tag_comparison(program, atom))
            return equal if equal is None or atom.operator in ("===", "==") else not equal
        call = atom.left.call
        if atom.operator != "" or call is None:
            return None
        if call.method == "is" and fx.last(fx.owner(call.callee)) in shorts:
            return is_lost  # `Lost.is(e)`, `Claim.Lost.is(e)`
        return tagged(_is_tagged(program, call))

    return decide


def _is_tagged(program: Program, call: Call) -> str | None:
    """The tag `Predicate.isTagged(e, "Lost")` or `Predicate.isTagged("Lost")(e)` tests for, else None."""
    name = fx.strip_call_marks(call.callee)
    if fx.last(name) != "isTagged":
        return None
    if call.callee.endswith("()"):  # data-last: the tag is the inner call's argument
        inner = call.callee_expr.call if call.callee_expr is not None else None
        return _tag(program, inner.args[0]) if inner is not None and inner.args else None
    return _tag(program, call.args[1]) if len(call.args) > 1 else None


def _tag_comparison(program: Program, atom: Atom) -> str | None:
    """The tag in `e._tag === "Lost"` or `e._tag === LOST` (either side), else None."""
    for ref, literal in ((atom.left, atom.right), (atom.right, atom.left)):
        if ref is None or literal is None:
            continue
        path = ref.member_path or ""
        if path == "_tag" or path.endswith("._tag"):
            return _tag(program, literal)
    return None


def _exit_succeeds(end: Exit, opts: Options) -> bool:
    """This way out of a handler produces success: a bare return, falling off the end, or a
    success value (`Effect.void`, `Effect.succeed(..)`) that does not fail again."""
    if end.kind == "throw":
        return False
    if end.value is None:
        return True
    if fx.refers_to_any(end.value, opts.fail):
        return False
    return fx.refers_to_any(end.value, opts.success) or succeeds(fx.ref_name(end.value))


def _lost_finding(
    scan: Scan,
    call: Call,
    why: str,
    subject: Call | None,
    stage: Expr | None = None,
    handler: str = "its handler returns success without failing again",
) -> Finding:
    location = fx.loc(stage.path, stage.line, stage.end_line) if stage is not None else fx.call_loc(call)
    target = f" on `{subject.callee}`" if subject is not None else ""
    related: list[Location] = []
    if subject is not None and (subject.path, subject.line) != (location.path, location.line):
        related.append(fx.call_loc(subject, f"`{subject.callee}` fails with Lost when another owner took the claim"))
    cleanup = _coordinator_cleanup_around(scan, call)
    if cleanup is not None:
        related.append(fx.call_loc(cleanup, f"the cleanup handed to `{cleanup.callee_written}`"))
    for loop in loops_in(scan, call.path):
        if loop.fork is not None and fx.outer_named(loop.fn) is fx.outer_named(call.enclosing):
            related.append(fx.loc(loop.path, loop.line, loop.end_line, "the heartbeat whose Lost also goes unobserved"))
    for release in sorted(scan.hook_releases):
        related.append(fx.loc(release[0], release[1], release[1], "deletes the claim during the interruption commit, so Lost is the normal case here"))
    return scan.ctx.finding(
        "lost-suppressed",
        title=f"Lost claim swallowed{(' on `' + fx.last(subject.callee) + '`') if subject else ''}",
        message=(
            f"{why}{target} at {location.path}:{location.line}; {handler}. A Lost claim means another owner may hold "
            "the work, so the run must fail closed (let the failure through, or `Effect.orDie`) instead of "
            "reporting a clean stop without the lock."
        ),
        location=location,
        related=fx.unique_sorted(related),
        failure_sequence=[
            "the claim is lost while this run still works: deleted by an interruption commit, or expired and taken over",
            "another process starts the same work with a fresh claim",
            f"this run's {'renewal/release' if subject is None else '`' + fx.last(subject.callee) + '`'} fails with Lost "
            "and the handler turns it into success",
            "the caller sees a clean stop and nothing fails closed while the new owner runs the same work",
        ],
        anchor=(stage.normalized if stage is not None else call.normalized),
    )


def _coordinator_cleanup_around(scan: Scan, call: Call) -> Call | None:
    """The coordinator interrupt whose cleanup argument contains `call`, if any."""
    if call.path not in scan.coordinators_by_path:
        # Filtered once per file: a file with thousands of swallowing catches asks once per catch.
        scan.coordinators_by_path[call.path] = [
            other for other in fx.iter_calls(scan.program, [call.path]) if is_coordinator_interrupt(other, scan.opts)
        ]
    for other in scan.coordinators_by_path[call.path]:
        if other.line <= call.line and call.end_line <= other.end_line:
            return other
    return None
