"""schema-prev-ids: reading the TypeScript files this family inspects.

The values of a module's top-level bindings and their leaves (through the
TypeScript model, never the syntax tree), and the parse errors of the
registry and DDL files: over changed lines they make the family `error`,
elsewhere they are reported as `parse-error`.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Iterator

from reviewer.report.model import Location
from reviewer.rules.schema_prev_ids.snapshots import edit_span
from reviewer.rules.schema_prev_ids.state import State

if TYPE_CHECKING:
    from reviewer.typescript import Expr, Module


# ----- reading TypeScript values through the model

MAX_NESTING = 12  # generated registries are flat; deeper values are not walked


def top_level_values(module: "Module") -> list["Expr"]:
    """Values of the module's top-level bindings (`const X = ..`, `export default ..`), in source order."""
    values = (module.constant(name) for name in sorted(module.declarations))
    return sorted((v for v in values if v is not None), key=lambda v: (v.line, v.end_line))


def leaves(expr: "Expr", depth: int = 0) -> Iterator["Expr"]:
    """The leaf values inside `expr` in source order, through array elements,
    object property values, and a call's receiver and arguments."""
    if depth > MAX_NESTING:
        return
    children = _children(expr)
    if not children:
        yield expr
        return
    for child in children:
        yield from leaves(child, depth + 1)


def _children(expr: "Expr") -> tuple["Expr", ...]:
    if expr.elements:
        return expr.elements
    if expr.props:
        return tuple(value for _, value in expr.props)
    call = expr.call
    if call is None:
        return ()
    receiver = call.receiver
    return ((receiver,) if receiver is not None else ()) + call.args


# ----- parse errors of the TypeScript files this family reads


def parse_error_blocks(st: State, path: str) -> bool:
    """True when an ERROR region overlaps changed lines (the family must report `error`)."""
    regions = st.ctx.program.parse_errors(path)
    f = st.files.get(path)
    for start, end in sorted(regions):
        if f is not None and f.touches(start, end):
            st.errors.append(
                f"{path}:{start}-{end} does not parse (tree-sitter ERROR over changed lines), so its "
                "table declarations / migration imports cannot be proven"
            )
            return True
    if regions:
        start, end = sorted(regions)[0]
        st.add(
            "parse-error",
            title=f"{posixpath.basename(path)} has unparsed lines {start}-{end}",
            message=f"tree-sitter could not parse `{path}` lines {start}-{end} (outside the change); "
            "this family's reading of the file is partial there.",
            location=Location(path, start, end),
            related=edit_span(f, "the change this family checked in the same file") if f else [],
            anchor=f"{path}:parse-error",
        )
    return False
