"""schema-prev-ids: table declarations (`ddl_globs`) against snapshot changes.

A change to what drizzle-kit turns into DDL (type arguments and the
application-only `$` builder methods do not count) needs a snapshot change,
and a snapshot whose schema changed needs a DDL or migration change.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reviewer.change.changeset import ChangedFile, FileStatus
from reviewer.engine.globs import matches
from reviewer.report.model import Location
from reviewer.rules.schema_prev_ids.snapshots import SingleResult
from reviewer.rules.schema_prev_ids.state import State
from reviewer.rules.schema_prev_ids.tsread import MAX_NESTING, parse_error_blocks

if TYPE_CHECKING:
    from reviewer.typescript import Call, Expr, Program


# ----- DDL files


# drizzle's `$`-prefixed column builder methods act in the application only:
# `$type<T>()` is compile-time, `$default`/`$defaultFn`/`$onUpdate`/`$onUpdateFn`
# run in drizzle-orm at insert/update time. drizzle-kit emits no DDL for them.
_APP_ONLY_PREFIX = "$"

# A value's DDL form: nested tuples of strings, equal exactly when drizzle-kit
# would emit the same DDL for both values (as far as the syntax shows).
_Form = tuple[Any, ...]


@dataclass(frozen=True)
class _Part:
    """One piece of a table declaration: a column (`0.id`: argument 0, key `id`) or a whole argument (`2`)."""

    key: str
    form: _Form
    line: int
    end_line: int


@dataclass(frozen=True)
class _Table:
    name: str
    line: int
    end_line: int
    callee: str
    parts: tuple[_Part, ...]
    code_lines: frozenset[int]  # lines holding its syntax, not comments or blank lines

    @property
    def ddl(self) -> _Form:
        return (self.callee, tuple((p.key, p.form) for p in self.parts))


def _tables(program: "Program", path: str, calls: frozenset[str]) -> list[_Table]:
    module = program.module(path)
    if module is None:
        return []
    out: list[_Table] = []
    for call in module.calls():
        last = call.callee.rsplit(".", 1)[-1]
        if last not in calls:
            continue
        name = call.args[0].string_value if call.args else None
        out.append(_Table(name or f"@{call.line}", call.line, call.end_line, last, _parts(program, call), _code_lines(call)))
    return sorted(out, key=lambda t: (t.line, t.name))


def _parts(program: "Program", call: "Call") -> tuple[_Part, ...]:
    parts: list[_Part] = []
    for index, arg in enumerate(call.args):
        if arg.props:
            parts.extend(
                _Part(f"{index}.{key}", _ddl_form(program, value), value.line, value.end_line) for key, value in arg.props
            )
        else:
            parts.append(_Part(str(index), _ddl_form(program, arg), arg.line, arg.end_line))
    return tuple(parts)


def _builder_name(program: "Program", link: "Call") -> str:
    """The column builder a chain starts from, by what it is rather than how it is written.

    `DatabasePath.absoluteColumn()` (a namespace import) and `absoluteColumn()`
    (a named, possibly aliased import) are the same builder: a name imported
    from a repository module is named by the module that defines it and its
    name there, through re-exports; a package's builder by its import-resolved
    name (`text`, also when imported as `txt`).
    """
    written = link.callee_text
    if all(part.replace("$", "_").isidentifier() for part in written.split(".")):  # a dotted name
        symbol = _imported_symbol(program, link.path, written)
        if symbol is not None:
            return symbol
    return link.callee


_REEXPORT_HOPS = 8


def _imported_symbol(program: "Program", path: str, written: str) -> str | None:
    """`<defining module>#<name>` of a dotted name imported from a repository module, else None."""
    module = program.module(path)
    head, _, rest = written.partition(".")
    imp = module.imports.get(head) if module is not None else None
    if imp is None or imp.module is None:
        return None  # a local, or a package (its callee is already import-resolved)
    target, name = imp.module, rest if imp.imported == "*" else ".".join(p for p in (imp.imported, rest) if p)
    for _ in range(_REEXPORT_HOPS):
        current = program.module(target)
        first, _, more = name.partition(".")
        export = current.exports.get(first) if current is not None else None
        if current is not None and current.namespace == first and more:
            name = more  # the module exports itself as this namespace
        elif export is not None and export.kind == "namespace" and export.module and more:
            target, name = export.module, more
        elif export is not None and export.kind == "reexport" and export.module:
            target, name = export.module, ".".join(p for p in (export.target, more) if p)
        else:
            break
    return f"{target}#{name}"


def _ddl_form(program: "Program", expr: "Expr", depth: int = 0) -> _Form:
    """What drizzle-kit turns into DDL, read from the syntax tree.

    A column builder chain (`text({ mode: "json" }).$type<T>().notNull()`) is
    its calls by name with their arguments' forms: type arguments are not
    part of a call's name or arguments, and application-only `$` methods are
    left out, so a change confined to them is no DDL change. Objects and
    arrays are compared member by member; anything else (a callback such as
    `(t) => [index(..).on(t.id)]`, a literal) by its text with comments and
    formatting dropped, which keeps a type annotation inside a callback a
    (conservative) change.
    """
    if depth > MAX_NESTING:
        return ("text", expr.normalized)
    if expr.props:
        return ("object", tuple((key, _ddl_form(program, value, depth + 1)) for key, value in expr.props))
    if expr.elements:
        return ("array", tuple(_ddl_form(program, e, depth + 1) for e in expr.elements))
    call = expr.call
    if call is None:
        return ("text", expr.normalized)
    chain = call.chain
    upto = next((i for i, c in enumerate(chain) if c.expr == call.expr), len(chain) - 1)
    links: list[_Form] = []
    for position, link in enumerate(chain[: upto + 1]):
        name = _builder_name(program, link) if position == 0 else link.method
        if position > 0 and name.startswith(_APP_ONLY_PREFIX):
            continue
        links.append((name, tuple(_ddl_form(program, a, depth + 1) for a in link.args)))
    return ("call", tuple(links))


def _code_lines(call: "Call") -> frozenset[int]:
    """Lines a table declaration's syntax occupies: its first and last line, each
    column's value (`integer().notNull()`, however many lines it spans) and its
    other arguments. A comment between two columns lies on none of them."""
    lines = {call.line, call.end_line}
    for arg in call.args:
        for part in tuple(value for _, value in arg.props) or (arg,):
            lines.update(range(part.line, part.end_line + 1))
    return frozenset(lines)


def _changed_part_lines(new: _Table, old: _Table | None) -> frozenset[int]:
    """Lines of the columns (or arguments) whose DDL form differs from the base's."""
    before = {p.key: p.form for p in old.parts} if old is not None else {}
    lines: set[int] = set()
    for part in new.parts:
        if before.get(part.key) != part.form:
            lines.update(range(part.line, part.end_line + 1))
    return frozenset(lines)


def _ddl_changes(st: State, f: ChangedFile) -> list[tuple[str, int, int]]:
    """(table, first changed line, last changed line) per table declaration of `f` whose DDL changed."""
    calls = frozenset(st.opt("table_calls"))
    patched = _tables(st.ctx.program, f.path, calls) if f.status is not FileStatus.DELETED else []
    base = _tables(st.ctx.base_program, f.source_path, calls) if f.status is not FileStatus.ADDED else []
    base_by_name = {t.name: t for t in base}
    out: list[tuple[str, int, int]] = []
    for t in patched:
        old = base_by_name.get(t.name)
        if old is not None and old.ddl == t.ddl:
            continue  # types, comments or formatting only
        # Point at the changed columns; a removed column leaves only the table's own lines.
        inside = sorted(n for n in f.added_lines if n in _changed_part_lines(t, old)) or sorted(
            n for n in f.added_lines if n in t.code_lines
        )
        out.append((t.name, inside[0] if inside else t.line, inside[-1] if inside else t.end_line))
    names = {t.name for t in patched}
    for old in base:
        if old.name not in names:
            # A deleted file is reported at its base lines (DESIGN.md); otherwise at the hunk.
            line = old.line if f.status is FileStatus.DELETED else _hunk_line_for_base(f, old.line)
            out.append((old.name, line, line))
    return sorted(out, key=lambda x: (x[1], x[0]))


_SOURCE = (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs")


def _declares_tables(st: State, f: ChangedFile) -> bool:
    """A production source file declaring a table (a `table_calls` call) before or after the change:
    a table-declaration file by what it holds, wherever it lives (`src/db/schema.ts`, `tables.ts`)."""
    path = f.path if f.status is not FileStatus.DELETED else f.source_path
    if not path.endswith(_SOURCE) or not st.ctx.production(path):
        return False
    calls = frozenset(st.opt("table_calls"))
    if f.status is not FileStatus.DELETED and _imports_tables(st.ctx.program, f.path, calls):
        return True
    return f.status is not FileStatus.ADDED and _imports_tables(st.ctx.base_program, f.source_path, calls)


def _imports_tables(program: "Program", path: str, calls: frozenset[str]) -> bool:
    """A table call whose callee is imported (drizzle's `pgTable`, or a module re-exporting it), not a
    function of the file's own that happens to be called `sqliteTable`."""
    module = program.module(path)
    if module is None or not _tables(program, path, calls):
        return False
    for call in module.calls():
        head = call.callee.split(".", 1)[0].replace("()", "")
        if call.callee.rsplit(".", 1)[-1] in calls and head in module.imports:
            return True
    return False


def _hunk_line_for_base(f: ChangedFile, base_line: int) -> int:
    for h in f.hunks:
        if h.old_start <= base_line < h.old_start + max(h.old_count, 1):
            return max(1, h.new_start)
    return 1


# ----- DDL vs snapshot


def check_ddl(st: State, parts: list[str]) -> list[ChangedFile]:
    """A changed table declaration needs a snapshot change. Returns the changed DDL files."""
    ddl_globs = tuple(st.opt("ddl_globs"))
    candidates = [
        f for p, f in sorted(st.files.items())
        if p == f.path and (matches(f.path, ddl_globs) or matches(f.source_path, ddl_globs)) and _declares_tables(st, f)
    ]
    ddl_files: list[ChangedFile] = []
    outside: list[str] = []
    keeps: dict[str, bool] = {}
    for f in candidates:
        package = _package_of(st, f.path if f.status is not FileStatus.DELETED else f.source_path)
        if package not in keeps:
            keeps[package] = _keeps_migrations(st, package)
        if keeps[package]:
            ddl_files.append(f)
        else:
            outside.append(package or ".")
    if outside:
        st.touched = True
        parts.append(
            f"table declarations changed in {', '.join(sorted(set(outside)))}, which keeps no migration snapshot "
            "or migration: not a migration chain this family checks"
        )
    changed: list[tuple[ChangedFile, str, int, int]] = []
    for f in ddl_files:
        st.touched = True
        if f.patched_text is not None and f.status is not FileStatus.DELETED and parse_error_blocks(st, f.path):
            continue
        changed.extend((f, *change) for change in _ddl_changes(st, f))
    if not changed:
        if ddl_files:
            parts.append(
                f"{', '.join(sorted(posixpath.basename(f.path) for f in ddl_files))} changed, "
                "no table's DDL changed (imports, types, comments or formatting only)"
            )
        return ddl_files
    if st.snapshot_changed:
        parts.append(f"DDL change in {', '.join(sorted({posixpath.basename(f.path) for f, *_ in changed}))} matched by a snapshot")
        return ddl_files
    snaps = sorted(st.opt("snapshots"))
    for f, table, line, end in changed:
        path = f.path if f.status is not FileStatus.DELETED else f.source_path
        with_migration = st.migration_changed
        st.add(
            "ddl-without-snapshot",
            title=f"table {table} changed without a snapshot change",
            message=(
                f"The declaration of `{table}` in `{path}` changed, but no snapshot"
                f" ({', '.join('`' + s + '`' for s in snaps) or 'of any migration chain'}) changed with it"
                + (
                    "; the migration added alongside has no snapshot recording the schema it creates."
                    if with_migration
                    else ", and no migration creates the change."
                )
            ),
            location=Location(path, line, end),
            related=[Location(s, 1, 1, "snapshot left unchanged") for s in snaps if st.ctx.patched.exists(s)],
            failure_sequence=(
                f"the code now declares a different `{table}` table",
                *(
                    ("the snapshot still records the old table",
                     "the next `drizzle-kit generate` diffs the code against that stale snapshot and emits the same DDL again",
                     "the duplicate migration fails on every database that already ran this one")
                    if with_migration
                    else ("no migration changes it in any deployed database",
                          "the first query using the new shape fails (`no such column`) on every existing database",
                          "the next generate folds this change into an unrelated migration")
                ),
            ),
            anchor=f"{path}:ddl:{table}",
        )
    return ddl_files


def _package_of(st: State, path: str) -> str:
    """The nearest folder above `path` holding a package.json (either tree), else the repository root ""."""
    folder = posixpath.dirname(path)
    while folder:
        manifest = posixpath.join(folder, "package.json")
        if st.ctx.patched.exists(manifest) or st.ctx.base.exists(manifest):
            return folder
        folder = posixpath.dirname(folder)
    return ""


def _keeps_migrations(st: State, package: str) -> bool:
    """The package holds a snapshot (single-file, v1 folder, legacy journal) or the migration directory, in either tree."""
    prefix = package + "/" if package else ""
    migration_dir = str(st.opt("migration_dir")).rstrip("/") + "/"
    singles = set(st.opt("snapshots"))
    v1_globs = tuple(st.opt("snapshot_globs"))
    journal_globs = tuple(st.opt("journal_globs"))
    folder = st.name_pattern("v1_folder_pattern")
    for tree in (st.ctx.patched, st.ctx.base):
        if any(s.startswith(prefix) and tree.exists(s) for s in singles):
            return True
        if migration_dir.startswith(prefix) and tree.paths(migration_dir):
            return True
        for p in tree.paths(prefix):
            if matches(p, journal_globs) or (
                matches(p, v1_globs) and folder.match(posixpath.basename(posixpath.dirname(p)))
            ):
                return True
    return False


def check_snapshot_without_ddl(st: State, singles: list[SingleResult], ddl_files: list[ChangedFile]) -> None:
    if ddl_files or st.migration_changed:
        return
    for res in singles:
        if not res.schema_changed or res.base is None:
            continue
        line, end = res.snapshot.span("ddl") if "ddl" in res.snapshot.spans else res.snapshot.span("id")
        f = st.files[res.snapshot.path]
        inside = sorted(n for n in f.added_lines if line <= n <= end)
        st.add(
            "snapshot-without-ddl",
            title=f"{posixpath.basename(res.snapshot.path)} schema changed without DDL or migration",
            message=(
                f"`{res.snapshot.path}` records a schema change, but no table declaration ({', '.join(st.opt('ddl_globs'))}) "
                "and no migration changed with it: the snapshot no longer describes the code."
            ),
            location=Location(res.snapshot.path, inside[0] if inside else line, inside[-1] if inside else end),
            failure_sequence=(
                "the snapshot describes tables the code does not declare",
                "the next generate diffs the code against this snapshot",
                "it emits a migration that silently undoes (or duplicates) the hand-edited schema",
            ),
            anchor=f"{res.snapshot.path}:snapshot-without-ddl",
        )
