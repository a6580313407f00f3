"""What the families' vocabulary inference shares: drizzle table declarations, the functions that
write a table, and how a function is named where it is called.

Inference proposes names from the base tree (reviewer/engine/vocabulary.py
decides when they are used); it reads through the TypeScript model, never
the syntax tree, and never the patch.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping, Pattern

from reviewer.engine import globs
from reviewer.engine.api import Evidence, Proposal
from reviewer.engine.context import ere_escape
from reviewer.typescript import SqlStatement, implemented_member, run_calls, sql_statement, writes_in_literals

if TYPE_CHECKING:
    from reviewer.engine.context import Corpus
    from reviewer.typescript import Call, Function, Module, Program

TABLE_BUILDERS = ("sqliteTable", "pgTable", "mysqlTable")
TABLE_CALL = r"\b(" + "|".join(TABLE_BUILDERS) + r")\s*\("
_FIRST_STRING = re.compile(r"""^[\w$.]+\(\s*["'`]([^"'`]+)["'`]""")
_WRITES = frozenset({"insert", "update", "delete"})
# A function name shown as evidence is cut (names are identifiers, but a hostile tree may hold anything).
_MAX_SHOWN = 80
# How many spellings of one function's call sites are proposed.
_MAX_SPELLINGS = 3


@dataclass(frozen=True)
class Column:
    key: str  # the property in the table's column object
    sql: str  # the column's SQL name when written (`integer("wake_attempts")`), else the key
    line: int


@dataclass(frozen=True)
class TableDecl:
    name: str  # the binding (`SessionTable`)
    path: str
    line: int
    columns: tuple[Column, ...]
    sql_name: str = ""  # the table's name in SQL (`pgTable("run_lease", ..)`), which raw SQL writes name

    def matching(self, pattern: Pattern[str] | Iterable[str]) -> list[Column]:
        """Columns whose key or SQL name matches `pattern` (a regex, or a set of exact names)."""
        if isinstance(pattern, re.Pattern):
            return [c for c in self.columns if pattern.search(c.key) or pattern.search(c.sql)]
        names = set(pattern)
        return [c for c in self.columns if c.key in names or c.sql in names]


# Test code drives an API directly and declares tables of its own: never a source of vocabulary.
TEST_GLOBS = ("**/test/**", "**/tests/**", "**/__tests__/**", "**/fixtures/**", "**/*.test.*",
              "**/*.spec.*")


def code_paths(corpus: "Corpus", paths: Iterable[str]) -> list[str]:
    """`paths` without test code (the family's `ignore_paths` when it declares them, and test folders)."""
    ignore = tuple(corpus.opts.ignore_paths) if corpus.family.option("ignore_paths") else ()
    return [p for p in paths if not globs.matches(p, TEST_GLOBS + ignore)]


def modules(corpus: "Corpus", patterns: list[str], all_match: bool = False) -> Iterator["Module"]:
    """The parsed modules of the base tree's non-test files matching the patterns (`Corpus.candidates`)."""
    for path in code_paths(corpus, corpus.candidates(patterns, all_match)):
        module = corpus.program.module(path)
        if module is not None:
            yield module


def proposal(option: str, found: Mapping[str, Evidence], looked_for: str) -> Proposal:
    """A proposal of the names in `found` (sorted), each with its evidence."""
    names = tuple(sorted(found))
    return Proposal(option, names, tuple(found[n] for n in names), looked_for)


def shown(name: str) -> str:
    return name if len(name) <= _MAX_SHOWN else name[:_MAX_SHOWN] + "…"


def tables(corpus: "Corpus", columns: str) -> list[TableDecl]:
    """The drizzle tables declared at the top level of the base tree's TypeScript files that also
    spell `columns` (a regex for the column names the caller wants; read once per review each)."""
    key = f"tables:{columns}"
    if key not in corpus.memo:
        corpus.memo[key] = _tables(corpus, columns)
    return corpus.memo[key]


def _tables(corpus: "Corpus", columns: str) -> list[TableDecl]:
    out: list[TableDecl] = []
    # Only files that declare a table and spell a wanted column are parsed.
    for module in modules(corpus, [TABLE_CALL, columns], all_match=True):
        for name in sorted(module.declarations):
            value = module.constant(name)
            call = value.call if value is not None else None
            if call is None or "." in name or call.callee.rsplit(".", 1)[-1] not in TABLE_BUILDERS:
                continue
            props = call.args[1].props if len(call.args) > 1 else ()
            cols = []
            for key, expr in props:
                found = _FIRST_STRING.match(expr.normalized)
                cols.append(Column(key, found.group(1) if found else key, expr.line))
            sql_name = call.args[0].string_value if call.args else None
            out.append(TableDecl(name, module.path, value.line, tuple(cols), sql_name or name))
    return sorted(out, key=lambda t: (t.path, t.line, t.name))


@dataclass(frozen=True)
class Writer:
    """A named function that writes rows of a table, and the first write it makes."""

    fn: "Function"
    table: str  # the table's binding (TableDecl.name)
    line: int
    statement: "SqlStatement | None"  # the write as raw SQL, None when written with drizzle's builders


def writers(corpus: "Corpus", tables: Iterable[TableDecl]) -> list[Writer]:
    """Each named function that inserts, updates or deletes rows of a table: through drizzle's
    builders (`db.update(T)`) or in raw SQL naming the table's SQL name."""
    by_binding = {t.name: t.name for t in tables}
    by_sql = {(t.sql_name or t.name): t.name for t in tables}
    if not by_binding:
        return []
    out: dict[tuple[str, int], Writer] = {}
    program = corpus.program
    for module in modules(corpus, [r"\b(" + "|".join(ere_escape(n) for n in sorted({*by_binding, *by_sql})) + r")\b"]):
        for fn in module.functions():
            member = fn.name is not None and implemented_member(program, module, fn._node) is not None
            if not fn.name or not (member or _is_api(module, fn)):
                continue
            # What runs when it is called: a factory (`make`) that defines the store's methods writes nothing itself.
            for call in _reached_calls(program, fn, member):
                written, statement = None, None
                if call.method in _WRITES and call.args:
                    written = by_binding.get(call.args[0].normalized.rsplit(".", 1)[-1])
                if written is None:
                    statement = sql_statement(call)
                    if statement is not None and statement.operation in _WRITES:
                        written = by_sql.get(statement.table or "")
                if written is not None:
                    out.setdefault((fn.path, fn.line), Writer(fn, written, call.line, statement))
                    break
    return [out[k] for k in sorted(out)]


_HELPER_HOPS = 2  # a service method -> its local helper -> the dialect branch that writes


def _reached_calls(program: "Program", fn: "Function", member: bool) -> Iterator["Call"]:
    """The calls that run when `fn` is called; for a service's method (`member`), then those of the local
    helpers it calls by name (`refreshShards(address, ids)`, bound to a function or to a dispatch over
    dialects whose every branch may be what runs): such a method often writes only through one. A plain
    function's helpers are not followed: a caller of the API is not the API."""
    seen: set[int] = {fn._node.id}
    todo: list[tuple[tuple["Call", ...], int]] = [(run_calls(fn), 0 if member else _HELPER_HOPS)]
    while todo:
        body, hops = todo.pop(0)
        for call in body:
            yield call
            callee = call.callee_expr
            if hops >= _HELPER_HOPS or callee is None or callee.identifier is None:
                continue
            value = program.bound_value(callee)
            if value is None or value._node.id in seen:
                continue
            seen.add(value._node.id)
            inner = value.function
            todo.append((run_calls(inner) if inner is not None else value.calls, hops + 1))


def _is_api(module: "Module", fn: "Function") -> bool:
    """A function others call by its name: declared at the top level, in a namespace or a declared object,
    or a class method; not a branch of a dispatch object handed to a call (`onDialect({ pg: () => .. })`)
    nor a local helper, whose names (`pg`, `orElse`) mean nothing outside."""
    return fn.kind == "method" or fn.name in module.declarations or declared_name(module, fn) in module.declarations


# A raw SQL write, spelt the way git greps it (a statement's first line may hold only the tag).
_SQL_WRITE_GREP = r"\b(INSERT|UPDATE|DELETE|insert into|delete from)\b|\bupdate\s+[A-Za-z_\"$]"
_TIME_WORDS = frozenset({"at", "until", "deadline", "ttl", "time", "timestamp", "heartbeat", "beat", "seen"})


def is_time_column(name: str) -> bool:
    """`acquired_at`, `lockedAt`, `valid_until`, `expires`, `lease_deadline`: a column holding a time."""
    words = _words(name)
    return bool(words) and (words[-1] in _TIME_WORDS or any(w.startswith("expir") for w in words))


# What a key names when it names a place many entities share (a shard hosts many entities, a
# tenant owns many runs, a worker holds many jobs): an equality on it reads many entities' rows.
_GROUP_WORDS = frozenset({
    "shard", "partition", "tenant", "bucket", "region", "zone", "cluster", "pool", "queue", "topic", "group",
    "runner", "worker", "node", "owner", "org", "organization", "workspace", "project", "instance", "consumer",
    "executor", "host", "lane",
})
_KEY_WORDS = frozenset({"id", "ids", "key", "keys", "no", "num", "number", "idx", "ref", "uuid"})


def _words(name: str) -> list[str]:
    """`lease_expires_at`, `leaseExpiresAt`, `LEASE_TTL` -> their words, lower case."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]


def is_group_key(name: str, table: str | None = None) -> bool:
    """`shard_id`, `shardIds`, `tenantID`, `owner_id`: a column naming a group of entities, not one entity.
    Not when the table itself holds that thing (`workflow_node.node_id` names one node)."""
    words = _words(name)
    while words and (words[-1] in _KEY_WORDS or re.fullmatch(r"v?\d+", words[-1])):
        words = words[:-1]
    if not words or words[-1].rstrip("s") not in _GROUP_WORDS and words[-1] not in _GROUP_WORDS:
        return False
    stem = words[-1]
    held = {w.rstrip("s") for w in _words(table or "")}
    return stem.rstrip("s") not in held and stem not in held


def compare_and_set_tables(corpus: "Corpus") -> list[TableDecl]:
    """Tables that raw SQL takes by compare-and-set on a time: a write that sets a time column and
    bounds that same column (`SET valid_until = .. WHERE valid_until < now()`, an upsert's
    `ON CONFLICT .. DO UPDATE .. WHERE acquired_at < $expired`). Such a row is held until its time runs
    out: a lease, whatever its table and columns are called. Each table once, with those columns."""
    key = "compare-and-set-tables"
    if key not in corpus.memo:
        found: dict[str, tuple[str, int, set[str]]] = {}
        for module in modules(corpus, [_SQL_WRITE_GREP, "`"], all_match=True):
            if not writes_in_literals(module.path, module.root):
                continue  # the words were in code or comments: no statement to read, no index to build
            for call in module.calls():
                statement = sql_statement(call)
                if statement is None or statement.operation not in ("insert", "update") or not statement.table:
                    continue
                held = {c for c in set(statement.writes) & set(statement.ranges) if is_time_column(c)}
                if held:
                    entry = found.setdefault(statement.table, (module.path, call.line, set()))
                    entry[2].update(held)
        corpus.memo[key] = [TableDecl(name, path, line, tuple(Column(c, c, line) for c in sorted(cols)), name)
                            for name, (path, line, cols) in sorted(found.items())]
    return corpus.memo[key]


def spellings(corpus: "Corpus", fn: "Function") -> tuple[str, ...]:
    """How call sites in the base tree name `fn` (import-resolved, as rules match callees).

    Falls back to the name it is declared under when nothing calls it.
    """
    program = corpus.program
    member = implemented_member(program, program.module(fn.path), fn._node) if program.module(fn.path) else None
    if member is not None:
        return (member,)  # a service's method is called through its tag, never by its own name
    counts: dict[str, int] = {}
    word = ere_escape(fn.name or "")
    stem = ere_escape(posixpath.splitext(posixpath.basename(fn.path))[0])
    # Callers elsewhere name the function and import its file (by its stem, or its
    # folder's index); a common name like `remove` must not mean parsing half the tree.
    importers = corpus.candidates([rf"\b{word}\b", rf"from\s+['\"][^'\"]*({stem}|/)['\"]"], all_match=True) if fn.name else ()
    for path in sorted({fn.path, *code_paths(corpus, importers)}) if fn.name else ():
        module = program.module(path)
        if module is None:
            continue
        for call in module.calls():
            if call.method != fn.name and call.callee.rsplit(".", 1)[-1] != fn.name:
                continue
            target = program.definition(call.path, call.callee_text) if call.callee_text else None
            if target is not None and (target.path, target.line) == (fn.path, fn.line):
                name = call.callee.replace("()", "")
                counts[name] = counts.get(name, 0) + 1
    if counts:
        # A bare `drop` would match every `x.drop()` of the code base: a qualified spelling,
        # when any call site has one, is the name (named imports still match it by its last part).
        qualified = [n for n in counts if "." in n]
        ranked = sorted(qualified or counts, key=lambda n: (-counts[n], n))
        return tuple(ranked[:_MAX_SPELLINGS])
    return (declared_name(program.module(fn.path), fn),) if fn.name else ()


def declared_name(module: "Module | None", fn: "Function") -> str:
    """`N.f` for a member of the file's namespace (or a namespace block / object it is declared in), else `f`."""
    name = fn.name or ""
    if module is None:
        return name
    dotted = sorted(k for k, node in module.declarations.items() if k.endswith("." + name)
                    and module.declaration_lines(k) == (fn.line, fn.end_line))
    if dotted:
        return dotted[0]
    if module.namespace and name in module.exported:
        return f"{module.namespace}.{name}"
    return name
