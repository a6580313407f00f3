"""schema-prev-ids: hand-registered migrations (`migration_dir` + `migration_registry`).

A new snapshot version of the single-file layout needs a new migration; each
new migration sorts after every base migration and is listed, last, in the
registry (static imports listed in a value, or dynamic `import("./migration/..")`
calls); a registry in neither form is reported as not understood.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from reviewer.change.changeset import FileStatus
from reviewer.report.model import Location
from reviewer.rules.schema_prev_ids.snapshots import SingleResult, edit_span, loc, show_id
from reviewer.rules.schema_prev_ids.state import State
from reviewer.rules.schema_prev_ids.tsread import leaves, parse_error_blocks, top_level_values

if TYPE_CHECKING:
    from reviewer.typescript import Import, Module, Program


_TS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs")


def _strip_ext(path: str, extensions: tuple[str, ...] = _TS_EXTENSIONS) -> str:
    return next((path[: -len(ext)] for ext in extensions if path.endswith(ext)), path)


def _stem(path: str) -> str:
    """A migration's name: its file name without its (TypeScript or `.sql`) extension."""
    return _strip_ext(posixpath.basename(path), _TS_EXTENSIONS + (".sql",))


# ----- opencode migrations (migration_dir + registry)


def _migration_files(paths: Iterable[str], migration_dir: str) -> list[str]:
    prefix = migration_dir.rstrip("/") + "/"
    return sorted(p for p in paths if p.startswith(prefix) and "/" not in p[len(prefix):])


def _name_line(program: "Program", path: str, stem: str) -> int:
    """The line of the string naming the migration (its `name:` property), else its first line."""
    module = program.module(path)
    if module is None:  # not TypeScript (a `.sql` migration) or not in the tree
        return 1
    for value in top_level_values(module):
        for leaf in leaves(value):
            text = leaf.string_value
            if text is not None and stem in text:
                return leaf.line
    return 1


def _order_key(stem: str, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    m = pattern.match(stem)
    if not m:
        return None
    return (m.group(1) if pattern.groups else m.group(0), stem)


def check_migrations(st: State, single: SingleResult | None) -> list[str]:
    """New migration files: present, registered, newest. Returns the summary parts."""
    migration_dir = str(st.opt("migration_dir"))
    base_migrations = _migration_files(st.ctx.base.paths(migration_dir.rstrip("/") + "/"), migration_dir)
    changed_migrations = _migration_files(st.files, migration_dir)
    added = [
        p for p in changed_migrations
        if st.files[p].path == p and st.files[p].status in (FileStatus.ADDED, FileStatus.RENAMED, FileStatus.COPIED)
    ]
    if changed_migrations:
        st.touched = True
        st.migration_changed = True
    parts: list[str] = []
    if single is not None and not added:
        edited = [p for p in changed_migrations if p in base_migrations and st.files[p].status is FileStatus.MODIFIED]
        removed = [p for p in base_migrations if p in st.files and not st.ctx.patched.exists(p)]
        instead = (
            f" It edits {', '.join('`' + _stem(p) + '`' for p in edited)} instead, which deployed databases have "
            "already applied and will not run again."
            if edited
            else ""
        ) + (
            f" It deletes {', '.join('`' + _stem(p) + '`' for p in removed)}, which deployed databases have already "
            "applied: deleting it undoes nothing there."
            if removed
            else ""
        )
        snap_file = st.files[single.snapshot.path]
        on_change = [] if snap_file.touches(*single.snapshot.span("id")) else edit_span(
            snap_file, "the patch changes the snapshot here, without a new migration"
        )
        st.add(
            "migration-missing",
            title=f"{posixpath.basename(single.snapshot.path)} changed without a new migration",
            message=(
                f"`{single.snapshot.path}` is a new snapshot version (id {show_id(single.snapshot.id)}), but the patch adds "
                f"no migration under `{migration_dir}/`; existing databases never get the schema it describes.{instead}"
            ),
            location=loc(single.snapshot, "id"),
            related=[
                *on_change,
                *(Location(p, 1, 1, "base migration edited in place") for p in edited),
                *(Location(p, 1, 1, "base migration deleted by the patch") for p in removed),
            ],
            failure_sequence=(
                "the snapshot records the new schema",
                "no migration changes any deployed database",
                "code that relies on the new tables or columns fails against every existing database",
                "the next generate diffs from the new snapshot and never emits the missing DDL",
            ),
            anchor=f"{single.snapshot.path}:migration-missing",
        )
    if not added:
        return parts
    pattern = st.name_pattern("migration_timestamp")
    # Order is judged against the migrations the patch leaves: a base migration
    # it deletes or renames away is no longer one a database will be asked to run.
    surviving = [b for b in base_migrations if st.ctx.patched.exists(b)]
    registered, listed = _check_registry(st, added, surviving, pattern)
    for path in added:
        newest = _check_name_order(st, path, surviving, pattern, listed)
        bits = ["registered"] if registered.get(path) else []
        if newest:
            bits.append("newest")
        parts.append(f"migration {_stem(path)}" + (" " + ", ".join(bits) if bits else ""))
    return parts


def _sort_key(path: str, pattern: re.Pattern[str]) -> tuple[str, str]:
    stem = _stem(path)
    return _order_key(stem, pattern) or ("", stem)


def _check_name_order(
    st: State, path: str, surviving: list[str], pattern: re.Pattern[str], listed: list[str] | None
) -> bool:
    """True when the new migration sorts after every surviving base migration.

    With an understood registry that lists the migration, what matters is that
    the registry's order and the timestamps agree: the migrator runs what the
    registry lists, in its order, each migration it has not recorded yet. A new
    migration listed at its timestamp's place among older and newer ones (a
    branch that merged after a newer migration landed) still runs everywhere;
    one listed after a base migration its name sorts before is out of place
    (the generated registry sorts by name and would move it).
    """
    stem = _stem(path)
    line = _name_line(st.ctx.program, path, stem)
    key = _order_key(stem, pattern)
    older = [b for b in surviving if b != path]
    if key is None:
        later = older
        why = f"its name `{stem}` has no sortable timestamp prefix (pattern `{pattern.pattern}`)"
    else:
        later = [b for b in older if _sort_key(b, pattern) >= key]
        why = f"`{stem}` sorts before base migration(s) {', '.join('`' + _stem(b) + '`' for b in later)}"
    if not later:
        return True
    module = _strip_ext(path)
    if key is not None and listed is not None and module in listed:
        mine = listed.index(module)
        # A base migration the registry does not list is never run: no order to keep with it.
        misplaced = [b for b in later if _strip_ext(b) in listed and listed.index(_strip_ext(b)) < mine]
        if not misplaced:
            st.notes.append(
                f"migration {stem} is dated before base migration(s) {', '.join(_stem(b) for b in later[:3])} and "
                f"listed before them in {posixpath.basename(str(st.opt('migration_registry')))}: the registry keeps "
                "timestamp order, and databases that already ran those run it next"
            )
            return False
        later = misplaced
        why = (
            f"`{stem}` sorts before base migration(s) {', '.join('`' + _stem(b) + '`' for b in later)}, "
            "but the registry lists it after them"
        )
    st.add(
        "migration-order",
        title=f"migration {stem} does not sort after the base migrations",
        message=f"The new migration `{path}` must sort after every base migration, but {why}.",
        location=Location(path, line, line),
        related=[Location(b, 1, 1, "base migration that sorts at or after the new one") for b in later[:3]],
        failure_sequence=(
            f"a deployed database has applied up to `{_stem(older[-1]) if older else '(none)'}`",
            f"the migrator only runs migrations that sort after the last one it recorded; `{stem}` does not",
            "the migration is skipped (or runs before a migration it depends on)",
            "the database lacks the schema the code and snapshot now assume",
        ),
        anchor=f"{path}:order",
    )
    return False


@dataclass(frozen=True)
class _Entry:
    local: str
    module: str  # repo path without extension
    line: int  # where the registry first lists it; 0 if never used
    order: int  # position among the registry's references, for uses on one line


def _import_target(registry: str, imp: "Import") -> str | None:
    """The repository path (without extension) an import names; a missing file still names one."""
    if imp.module:
        return _strip_ext(imp.module)
    if not imp.specifier.startswith("."):
        return None  # a package
    return _strip_ext(posixpath.normpath(posixpath.join(posixpath.dirname(registry), imp.specifier)))


def _registry_entries(program: "Program", registry: str, migration_dir: str) -> list[_Entry]:
    """The migrations a registry imports, each with where it is first listed."""
    module = program.module(registry)
    if module is None:
        return []
    prefix = _strip_ext(migration_dir.rstrip("/")) + "/"
    targets: dict[str, str] = {}
    for local, imp in sorted(module.imports.items()):
        target = _import_target(registry, imp)
        if target is not None and target.startswith(prefix):
            targets[local] = target
    uses = _first_uses(module, set(targets))
    static = [_Entry(local, target, *uses.get(local, (0, 0))) for local, target in targets.items()]
    return static + _dynamic_entries(module, registry, prefix)


# Dynamic imports sort after static references on the same line; generated
# registries use one form or the other, so the tie-break only keeps order stable.
_DYNAMIC_ORDER = 1_000_000


def _dynamic_entries(module: "Module", registry: str, prefix: str) -> list[_Entry]:
    """`import("./migration/x")` calls, in document order: each one registers its migration.

    Registries built as `Promise.all([import(..), ..])` or as an object of
    `() => import(..)` entries name their migrations this way. The specifier
    must be a plain string (a template or a variable names nothing provable).
    """
    out: list[_Entry] = []
    for order, call in enumerate(module.calls()):
        if call.callee != "import" or not call.args:
            continue
        specifier = call.args[0].string_value
        if specifier is None or not specifier.startswith("."):
            continue
        target = _strip_ext(posixpath.normpath(posixpath.join(posixpath.dirname(registry), specifier)))
        if target.startswith(prefix):
            out.append(_Entry(f'import("{specifier}")', target, call.line, _DYNAMIC_ORDER + order))
    return out


def _first_uses(module: "Module", names: set[str]) -> dict[str, tuple[int, int]]:
    """(line, order) of the first reference to each name in the module's code.

    References are read from the values of top-level bindings (`export const
    migrations = [a, b]`, `export default [..]`, `{ a, b }`, `[a].concat(b)`)
    and from the receivers and arguments of every call (`register(a)`);
    imports, comments and strings are not references. A list returned from
    a function body, or hidden behind a spread (`[...older]`), is not seen:
    the model exposes no other way to enumerate a module's identifiers.
    """
    found: dict[str, tuple[int, int]] = {}
    roots = [*top_level_values(module), *(call.expr for call in module.calls())]
    order = 0
    for root in roots:
        for leaf in leaves(root):
            order += 1
            head = (leaf.identifier or leaf.member_path or "").split(".", 1)[0]
            if head in names:
                found[head] = min(found.get(head, (leaf.line, order)), (leaf.line, order))
    return found


def _check_registry(
    st: State, added: list[str], surviving: list[str], pattern: re.Pattern[str]
) -> tuple[dict[str, bool], list[str] | None]:
    """Registration of each new migration, and the registry's order (module paths without
    extension) when the registry is understood, else None."""
    registry = str(st.opt("migration_registry"))
    migration_dir = str(st.opt("migration_dir"))
    result: dict[str, bool] = {}
    if not registry or not (st.ctx.base.exists(registry) or st.ctx.patched.exists(registry)):
        return result, None  # this repository has no registry: nothing to register in
    text = st.ctx.patched.text(registry)
    if text is not None and parse_error_blocks(st, registry):
        return result, None
    entries = _registry_entries(st.ctx.program, registry, migration_dir)
    in_base = st.ctx.base.exists(registry)
    base_entries = _registry_entries(st.ctx.base_program, registry, migration_dir) if in_base else []
    if _not_understood(entries, base_entries, in_base, bool(surviving), st.ctx.patched.exists(registry)):
        _report_not_understood(st, registry, text, added)
        return result, None
    # A module imported under two names counts by its listed name.
    by_module = {e.module: e for e in sorted(entries, key=lambda e: (e.line > 0, -e.line, -e.order))}
    listed = _first_listings(entries)
    position = {e.module: i for i, e in enumerate(listed)}
    base_stems = {_strip_ext(b) for b in surviving}
    for path in added:
        key = _strip_ext(path)
        entry = by_module.get(key)
        if entry is None or entry.line <= 0:
            how = "is not imported" if entry is None else f"is imported as `{entry.local}` but never listed"
            line = _name_line(st.ctx.program, path, _stem(path))
            related = _registry_related(registry, text, entry, listed)
            st.add(
                "migration-unregistered",
                title=f"migration {_stem(path)} is not registered in {posixpath.basename(registry)}",
                message=f"The new migration `{path}` {how} in `{registry}`; the migrator only runs what the registry lists.",
                location=Location(path, line, line),
                related=related,
                failure_sequence=(
                    "the patch deploys with the new snapshot and the code that uses the new schema",
                    f"the migrator walks `{registry}` and never sees `{_stem(path)}`",
                    "the database keeps the old schema",
                    "the first query against the new tables or columns fails",
                ),
                anchor=f"{path}:unregistered",
            )
            result[path] = False
            continue
        result[path] = True
        # Listed before a surviving base migration that sorts before it: the
        # registry runs it ahead of a migration it was written after.
        mine = _sort_key(path, pattern)
        after = [
            e for e in listed
            if e.module in base_stems and position[e.module] > position[key]
            and _sort_key(e.module, pattern) < mine
        ]
        if after:
            st.add(
                "migration-order",
                title=f"{posixpath.basename(registry)} lists {_stem(path)} before an older migration",
                message=(
                    f"`{registry}` lists the new migration `{entry.local}` before base migration(s) "
                    f"{', '.join('`' + e.local + '`' for e in after)}; it must come last."
                ),
                location=Location(registry, entry.line, entry.line),
                related=[Location(registry, e.line, e.line, f"base migration {posixpath.basename(e.module)} listed after it") for e in after[:3]],
                failure_sequence=(
                    "a fresh database runs the registry in order",
                    f"`{_stem(path)}` runs before a migration it was generated after",
                    "it alters tables that do not exist yet, or the older migration then fails on the altered schema",
                ),
                anchor=f"{registry}:order:{entry.local}",
            )
    return result, [e.module for e in listed]


def _first_listings(entries: list[_Entry]) -> list[_Entry]:
    """Listed entries in registry order, each migration at its first listing only
    (a later `import("./migration/x")` of a listed migration is a use, not a re-registration)."""
    seen: set[str] = set()
    out: list[_Entry] = []
    for e in sorted((e for e in entries if e.line > 0), key=lambda e: (e.line, e.order)):
        if e.module not in seen:
            seen.add(e.module)
            out.append(e)
    return out


def _not_understood(
    entries: list[_Entry], base_entries: list[_Entry], in_base: bool, has_base_migrations: bool, in_patched: bool
) -> bool:
    """The registry names no migration in any form this family reads.

    A base registry that named migrations and now names none was emptied by the
    patch: that is checked (every new migration is unregistered). A registry
    with no migrations to name yet (`export const migrations = []` before the
    first one) is understood as empty.
    """
    if entries or base_entries or not in_patched:
        return False
    return has_base_migrations or not in_base


def _report_not_understood(st: State, registry: str, text: str | None, added: list[str]) -> None:
    st.notes.append(f"{posixpath.basename(registry)} names no migration in a form this review reads: registration not checked")
    end = max(1, len((text or "").splitlines()))
    st.add(
        "registry-not-understood",
        title=f"{posixpath.basename(registry)} not understood: registration of {len(added)} new migration(s) not checked",
        message=(
            f"`{registry}` names no migration by a static import listed in a value or by a dynamic "
            f"`import(\"./…\")` call, so this review cannot tell whether "
            f"{', '.join('`' + _stem(p) + '`' for p in added[:3])}{' and others' if len(added) > 3 else ''} "
            "will run. Check the registry by hand."
        ),
        location=Location(registry, 1, end),
        related=[
            Location(p, line, line, "new migration whose registration is unproven")
            for p in added[:3]
            for line in (_name_line(st.ctx.program, p, _stem(p)),)
        ],
        failure_sequence=(
            "the registry builds its list in a form this review does not read",
            "a new migration missing from it would never run, and nothing here would notice",
        ),
        anchor=f"{registry}:not-understood",
    )


def _registry_related(registry: str, text: str | None, entry: _Entry | None, listed: list[_Entry]) -> list[Location]:
    """Where to look in the registry for an unregistered migration.

    The model's imports carry no position, so an imported-but-unlisted
    migration points at the list that leaves it out (the registry's other
    migrations) rather than at its import line.
    """
    if entry is not None and listed:
        first, last = listed[0].line, max(e.line for e in listed)
        return [Location(registry, first, last, f"the registry's list: `{entry.local}` is imported but not in it")]
    if text is None:
        return []
    note = f"imports `{entry.local}`, never lists it" if entry is not None else "the migration registry"
    return [Location(registry, 1, max(1, len(text.splitlines())), note)]
