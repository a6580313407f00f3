"""The model's spreads and `const` collections (collections.py) and builders continued across
statements and functions (builders.py), on drizzle-shaped snippets.

Every expected value was worked out by hand from the fixture text; line numbers are 1-based
lines of each file as written.
"""

from __future__ import annotations

import textwrap

from reviewer.typescript import (
    Program,
    arguments_of,
    callers_of,
    elements_of,
    exits,
    member_of,
    members_of,
    property_value,
    routes_to,
    spread_elements,
    uses_of,
)


def _ts(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


def _call(program: Program, path: str, method: str, line: int):
    return next(c for c in program.module(path).calls() if c.method == method and c.line == line)


# ---------------------------------------------------------------- collections

COLLECTIONS = {
    "order.ts": _ts(
        """
        import { asc } from "drizzle-orm"
        export const SHARED = [asc(T.wake_attempts), asc(T.id)] as const
        export const PAGE = { limit: 250, offset: 0 }
        """
    ),
    "scan.ts": _ts(
        """
        import { SHARED, PAGE } from "./order"
        import * as Order from "./order"
        const LOCAL = [asc(T.created), ...SHARED]
        const fair = () => [asc(T.wake_attempts)]
        function twice(flag) { if (flag) return [asc(T.a)]; return [asc(T.b)] }
        const computed = (keys) => keys.map((k) => asc(k))
        const grown = [asc(T.a)]
        grown.push(asc(T.b))
        const SMALL = { ...PAGE, limit: 40 }
        const OVERRIDDEN = { limit: 40, ...PAGE }
        const Nested = { page: { size: 5 } }
        export function scan(db, extra, overrides) {
          const opts = { limit: 50 }
          const loose = { limit: 20, ...overrides }
          const keyed = { limit: 10, [name]: 1 }
          const short = 7
          const withShort = { short }
          const moved = { limit: 60 }
          moved.limit = 600
          db.orderBy(...LOCAL, ...fair(), ...extra, ...grown, ...twice(true), ...computed([]), ...Order.SHARED)
          return [opts.limit, SMALL.limit, OVERRIDDEN.limit, loose.limit, keyed.limit, withShort.short, moved.limit,
            Nested.page.size, opts["limit"], opts.missing]
        }
        """
    ),
}


def _collections() -> Program:
    return Program(COLLECTIONS.get)


def test_spreads_of_const_arrays_and_array_helpers_are_flattened_in_place():
    program = _collections()
    order_by = _call(program, "scan.ts", "orderBy", 20)
    texts = [e.text for e in arguments_of(program, order_by)]
    assert texts == [
        "asc(T.created)",  # LOCAL, itself spreading the imported SHARED
        "asc(T.wake_attempts)",
        "asc(T.id)",
        "asc(T.wake_attempts)",  # fair(): a helper whose one result is an array literal
        "...extra",  # a parameter: kept as the spread, where resolution stopped
        "...grown",  # pushed to after it is built: not read
        "...twice(true)",  # two results: not read
        "...computed([])",  # not an array literal
        "asc(T.wake_attempts)",  # Order.SHARED through a namespace import
        "asc(T.id)",
    ]
    assert [e.kind for e in arguments_of(program, order_by)][4:8] == ["spread_element"] * 4
    # spread elements of the other file keep their own path
    assert arguments_of(program, order_by)[1].path == "order.ts"


def test_elements_of_reads_names_and_says_none_for_what_it_cannot():
    program = _collections()
    order_by = _call(program, "scan.ts", "orderBy", 20)
    local = order_by.args[0]  # `...LOCAL`
    assert local.kind == "spread_element"
    assert elements_of(program, order_by.args[3]) is None  # `...grown` itself is no array
    assert spread_elements(program, (local,))[0].text == "asc(T.created)"


def test_members_and_property_values_follow_const_objects_and_spreads_last_one_winning():
    program = _collections()
    (returned,) = [e for e in exits(program.function("scan.ts", "scan")) if e.kind == "return"]
    found = {e.text: property_value(program, e) for e in returned.value.elements}
    assert program.fold(found["opts.limit"]) == 50  # a local const object
    assert program.fold(found["SMALL.limit"]) == 40  # written after the spread: wins
    assert program.fold(found["OVERRIDDEN.limit"]) == 250  # the imported spread written last wins
    assert found["loose.limit"].kind == "spread_element"  # `...overrides` may set it
    assert found["keyed.limit"].kind == "pair"  # a computed key may set it
    assert found["withShort.short"].text == "7"  # `{ short }` stands for the const
    assert found["moved.limit"] is None  # assigned after it is built: not read
    assert program.fold(found["Nested.page.size"]) == 5
    assert program.fold(found['opts["limit"]']) == 50
    assert found["opts.missing"] is None


def test_members_of_lists_spreads_in_place_and_keeps_unread_ones():
    program = _collections()
    module = program.module("scan.ts")
    small = module.constant("SMALL")
    assert [k for k, _ in members_of(program, small)] == ["limit", "offset", "limit"]
    assert program.fold(member_of(program, small, "limit")) == 40
    assert members_of(program, module.constant("LOCAL")) is None  # an array, not an object


# ---------------------------------------------------------------- builders

BUILDERS = {
    "queries.ts": _ts(
        """
        export * as Queries from "./queries"
        export const pending = (db) => db.select().from(Inputs).where(eq(Inputs.wake_pending, true))
        export async function eager(db) { return db.select().from(Inputs) }
        export const viaConst = (db) => {
          const base = db.select().from(Inputs)
          return base
        }
        """
    ),
    "wake.ts": _ts(
        """
        import { pending, viaConst, Queries } from "./queries"
        function ordered(db) { return pending(db).orderBy(asc(Inputs.wake_attempts)) }
        export const run = function* (db, page) {
          const q = db.select().from(Exec).where(lte(Exec.expires_at, 1))
          const rows = yield* q.limit(5).all()
          const whole = yield* q
          paginate(q, page)
          const inner = (q) => q.all()
          let later = db.select().from(Exec)
          const first = yield* ordered(db).limit(10).all()
          const second = yield* Queries.pending(db).all()
          return viaConst(db).limit(1).get()
        }
        """
    ),
}


def _builders() -> Program:
    return Program(BUILDERS.get)


def _uses(program, path, line, paths=()):
    opening = _call(program, path, "select", line)
    return [(u.kind, u.expr.line, [c.method for c in u.links], [t.text for t in u.through])
            for u in uses_of(program, opening.chain_from_here[-1].expr, paths)]


def test_a_builder_bound_to_a_const_goes_to_each_read_of_the_name():
    program = _builders()
    assert _uses(program, "wake.ts", 4) == [
        ("chain", 5, ["limit", "all"], ["q"]),
        ("awaited", 6, [], ["q"]),
        ("argument", 7, [], ["q"]),
        # line 8: a parameter `q` of the arrow rebinds the name: not a read of this const
    ]
    (argument,) = [u for u in uses_of(program, _call(program, "wake.ts", "select", 4).chain_from_here[-1].expr)
                   if u.kind == "argument"]
    assert argument.host is not None and argument.host.callee_text == "paginate"


def test_a_let_is_stored_and_not_followed():
    program = _builders()
    assert _uses(program, "wake.ts", 9) == [("stored", 9, [], [])]


def test_a_returned_builder_goes_to_the_callers_of_its_plain_helper_in_the_searched_files():
    program = _builders()
    # not searched: only the helper's own file, where nobody calls it
    assert _uses(program, "queries.ts", 2) == [("returned", 2, [], [])]
    assert _uses(program, "queries.ts", 2, ["wake.ts"]) == [
        ("chain", 2, ["orderBy"], ["pending(db)"]),  # in ordered(), line 2 of wake.ts
        ("chain", 11, ["all"], ["Queries.pending(db)"]),  # through the module's own namespace
    ]
    helper = program.function("queries.ts", "pending")
    assert [(c.path, c.line) for c in callers_of(program, helper, ["wake.ts"])] == [("wake.ts", 2), ("wake.ts", 11)]


def test_async_helpers_hand_their_callers_a_promise_not_the_builder():
    program = _builders()
    assert _uses(program, "queries.ts", 3, ["wake.ts"]) == [("returned", 3, [], [])]


def test_a_const_returned_by_a_helper_is_followed_through_both():
    program = _builders()
    assert _uses(program, "queries.ts", 5, ["wake.ts"]) == [("chain", 12, ["limit", "get"], ["base", "viaConst(db)"])]


def test_routes_to_walks_back_through_names_and_helpers_to_where_the_value_starts():
    program = _builders()

    def routes(line, method):
        call = _call(program, "wake.ts", method, line)
        return [([[c.method for c in part] for part in r.parts], [t.text for t in r.through])
                for r in routes_to(program, call)]

    assert routes(5, "all") == [([["select", "from", "where"], ["limit", "all"]], ["q"])]
    assert routes(10, "all") == [
        ([["select", "from", "where"], ["orderBy"], ["limit", "all"]], ["pending(db)", "ordered(db)"])
    ]
    assert routes(11, "all") == [([["select", "from", "where"], ["all"]], ["Queries.pending(db)"])]
    assert routes(12, "get") == [([["select", "from"], ["limit", "get"]], ["base", "viaConst(db)"])]
    assert routes(8, "all") == []  # the arrow's parameter: nothing the model follows
    assert routes(4, "where") == []  # an opening continues nothing
