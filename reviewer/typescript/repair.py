"""Same-length repairs of grammar gaps that Effect's own API shapes fall into.

tree-sitter-typescript 0.23.2 cannot parse two shapes that Effect writes on
nearly every page, and its error often swallows the whole file:

- two call signatures of a type literal separated only by a newline, when the
  second starts with type parameters or a parameter list (every `dual` API):

      export const retry: {
        <E>(policy: Policy<E>): <A, R>(self: Effect<A, E, R>) => Effect<A, E, R>
        <A, E, R>(self: Effect<A, E, R>, policy: Policy<E>): Effect<A, E, R>
      } = dual(2, ...)

  A `;`, a member separator the grammar accepts there, is written into the
  second line's indentation in place of one blank;
- variance modifiers on type parameters (`interface Effect<out A, in R>`,
  TypeScript 4.7): the modifier is blanked;
- an indexed access on an import type (`import("pkg").Plugin["effect"]`): the
  `import("pkg")` is written as a name of the same length (`____________`), so
  the type reads as `Ns.Plugin["effect"]`; only where it stands in a type;
- type arguments on a tagged template (sql<Row[]> before a template literal, TypeScript 2.9): the
  grammar reads an instantiation missing a `!`; the type arguments are blanked, so the template is
  the tag's argument (sql, blanks, the template), and the repair holds only where it made one;
- an escape in a template literal type (`Missing \\`Self\\` generic`, Effect's `MissingSelfGeneric`): the
  grammar reads no escapes there, and the error swallows the rest of the file (all 17,104 lines of
  Schema.ts); the escape is blanked, and the repair holds only inside a template literal type.

Every byte, line and column stays where it was, so positions in findings are
the source's own. A repair is kept only when it leaves less of the file in
error; otherwise the file is read as it was, errors and all, and the families
fail closed on those regions as before.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import tree_sitter as ts

# The previous line must end a signature's return type (a name, `>`, `)`, `]`, `}`)
# for the next line to start a new member rather than continue an expression.
_ENDS_A_TYPE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$>)]}")
# `<in T>`, `<out A, in out B>`: a modifier right after `<` or `,`, before a parameter name.
# Also at the start of a line: a long parameter list puts one parameter on each line.
_VARIANCE = re.compile(rb"(?:^|<|,)\s*((?:in\s+out|in|out)\s+)(?=[A-Za-z_$])")
# `import("pkg").A.B[`: an import type with an indexed access after its member path.
_IMPORT_TYPE = re.compile(rb"""import\(\s*(?:"[^"\n]*"|'[^'\n]*')\s*\)(?=(?:\.[A-Za-z_$][\w$]*)+\[)""")
# tag<T> then a backtick: type arguments (on one line) right before a template's backtick.
_TAG_TYPE_ARGUMENTS = re.compile(rb"(?<=[A-Za-z0-9_$])(<[^`\n]*>)(?=`)")
# `\`` or any other escape, on a line holding a backtick: maybe inside a template literal type.
_ESCAPE = re.compile(rb"\\.")
# `type T<..> = `..``: a template literal type as a whole alias, looked for in the whole file, since its
# error can start at the top of the file (a backtick the grammar misreads re-pairs every later one).
_TEMPLATE_ALIAS = re.compile(rb"\btype\s+[A-Za-z_$][\w$]*\s*(?:<[^=;`]*>)?\s*=\s*`(?:[^`\\]|\\.)*`")
_TYPE_NODES = frozenset(("lookup_type", "nested_type_identifier", "generic_type", "type_arguments", "type_annotation",
                         "type_alias_declaration", "union_type", "intersection_type", "array_type", "tuple_type"))
_SHORT_ERROR_ROWS = 40  # an innermost error this short has each of its rows searched for repairs
_MAX_ROUNDS = 12
_MAX_MISSES = 12  # single repairs in a row that help nothing end the round: these are no grammar gaps
_MAX_PARSES = 60  # parses of one file, at most: a file made of errors costs a bounded multiple of one parse
_MAX_ERROR_ROWS = 5000  # more rows where errors start than this: not grammar gaps but a broken file, no repair tried
_TEXT_NODES = frozenset(("string", "template_string", "comment", "regex"))
_STATEMENT_LISTS = frozenset(("program", "statement_block", "class_body", "switch_case", "switch_default"))
_ONE_BY_ONE = 60  # repairs tried alone in one round, at most (each an incremental reparse)


@dataclass(frozen=True)
class _Spot:
    offset: int
    row: int
    column: int
    replacement: bytes
    kind: str = ""  # "tag": blanked type arguments of a tagged template (see `_holds`)


def _score(tree: ts.Tree) -> tuple[tuple[int, int, int], set[int]]:
    """How much of the file is in error (lines covered, then innermost error nodes, then their
    bytes: a whole-file error shrinks inside before it lets go), and the rows errors start on, with
    every row of a short innermost error (the gap may sit a few lines into it: a signature after a
    multi-line return type)."""
    starts: set[int] = set()
    covered: set[int] = set()
    inner = inner_bytes = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            starts.add(node.start_point[0])
            covered.update(range(node.start_point[0], node.end_point[0] + 1))
            if not any(c.is_error or c.has_error for c in node.children):
                inner += 1
                inner_bytes += max(1, node.end_byte - node.start_byte)
                if node.end_point[0] - node.start_point[0] <= _SHORT_ERROR_ROWS:
                    starts.update(range(node.start_point[0], node.end_point[0] + 1))
        if node.has_error:
            stack.extend(node.children)
    return (len(covered), inner, inner_bytes), starts


def _line_starts(source: bytes) -> list[int]:
    starts = [0]
    at = source.find(b"\n")
    while at != -1:
        starts.append(at + 1)
        at = source.find(b"\n", at + 1)
    return starts


def _line(source: bytes, starts: list[int], row: int) -> bytes:
    end = starts[row + 1] - 1 if row + 1 < len(starts) else len(source)
    return source[starts[row]:end]


def _alias_escapes(source: bytes, starts: list[int]) -> list[_Spot]:
    """For each template literal type written as a whole type alias, its text with every escape blanked
    (one repair: blanking one escape of a pair alone only moves the error)."""
    found: list[_Spot] = []
    if b"\\" not in source:
        return found
    for alias in _TEMPLATE_ALIAS.finditer(source):
        body = alias.group(0)
        tick = body.index(b"`")
        template = body[tick:]
        if b"\\" not in template:
            continue
        offset = alias.start() + tick
        row = bisect.bisect_right(starts, offset) - 1
        found.append(_Spot(offset, row, offset - starts[row], _ESCAPE.sub(b"  ", template), "escape"))
    return found


def _spots(source: bytes, rows: set[int]) -> list[_Spot]:
    """The repairs to try on the lines where errors start (and the line after each)."""
    starts = _line_starts(source)
    near: set[int] = set()
    for r in rows:  # the row, and the rows down to the first non-blank one after it
        near.add(r)
        r += 1
        while r < len(starts) and not _line(source, starts, r).strip():
            r += 1
        near.add(r)
    found: list[_Spot] = _alias_escapes(source, starts)
    for row in sorted(near):
        if not 0 <= row < len(starts):
            continue
        line = _line(source, starts, row)
        for match in _VARIANCE.finditer(line):
            found.append(_Spot(starts[row] + match.start(1), row, match.start(1), b" " * (match.end(1) - match.start(1))))
        for match in _TAG_TYPE_ARGUMENTS.finditer(line):
            found.append(_Spot(starts[row] + match.start(1), row, match.start(1), b" " * (match.end(1) - match.start(1)), "tag"))
        if b"`" in line:
            for match in _ESCAPE.finditer(line):
                if not any(f.offset == starts[row] + match.start() for f in found):
                    found.append(_Spot(starts[row] + match.start(), row, match.start(), b"  ", "escape"))
        for match in _IMPORT_TYPE.finditer(line):
            found.append(_Spot(starts[row] + match.start(), row, match.start(), b"_" * (match.end() - match.start())))
        body = line.lstrip(b" \t")
        indent = len(line) - len(body)
        if row == 0 or indent == 0 or body[:1] not in (b"<", b"("):
            continue
        previous = next((p for p in (_line(source, starts, r).rstrip() for r in range(row - 1, -1, -1)) if p), b"")
        # `=>` ends an arrow's head, never a signature: the next line is its body.
        if previous and previous[-1] in _ENDS_A_TYPE and not previous.endswith(b"=>") and not previous.lstrip().startswith((b"//", b"*", b"/*")):
            found.append(_Spot(starts[row] + indent - 1, row, indent - 1, b";"))
    return found


def _apply(parser: ts.Parser, tree: ts.Tree, source: bytes, spots: list[_Spot]) -> tuple[bytes, ts.Tree]:
    """The source with `spots` written in, parsed incrementally from `tree` (left unchanged)."""
    edited = bytearray(source)
    old = tree.copy()
    for spot in spots:
        end = spot.offset + len(spot.replacement)
        edited[spot.offset:end] = spot.replacement
        point, end_point = (spot.row, spot.column), (spot.row, spot.column + len(spot.replacement))
        old.edit(start_byte=spot.offset, old_end_byte=end, new_end_byte=end,
                 start_point=point, old_end_point=end_point, new_end_point=end_point)
    text = bytes(edited)
    return text, parser.parse(text, old)


def _holds(tree: ts.Tree, spot: _Spot) -> bool:
    """Whether a repair is what it stands for in `tree`.

    A written `;` must not end a statement: between two statements (`f\n(x)` made
    `f;(x)`) it would change what the code does; in a type literal, or in an error
    region still recovering, it separates members. A blanked modifier must have been
    one: the name after it is a type parameter (or still in an error region), never
    text of a string, a template or a comment (`'a, in b'` keeps its `in`).
    """
    if spot.replacement == b";":
        node = tree.root_node.descendant_for_byte_range(spot.offset, spot.offset + 1)
        if node is None or node.parent is None:
            return False
        # Between the members of a type literal (an interface body, a signature set), nowhere else.
        return node.parent.type in ("object_type", "interface_body")
    if spot.kind == "tag":
        # The backtick after the blank must open the argument of a tagged template.
        after = spot.offset + len(spot.replacement)
        node = tree.root_node.descendant_for_byte_range(after, after + 1)
        while node is not None and node.type != "template_string":
            node = node.parent
        return node is not None and node.start_byte == after and node.parent is not None and node.parent.type == "call_expression"
    if spot.kind == "escape":
        # Blanked only where the grammar reads no escapes: the text of a template literal *type*.
        node = tree.root_node.descendant_for_byte_range(spot.offset + 1, spot.offset + 2)
        while node is not None and not node.type.endswith(("statement", "declaration", "expression")):
            if node.type == "template_literal_type":
                return True
            if node.type in _TEXT_NODES:
                return False
            node = node.parent
        return False
    if spot.replacement.startswith(b"_"):
        # The name written for an import type must stand in a type, never in a value (`import("m").then`).
        node = tree.root_node.descendant_for_byte_range(spot.offset, spot.offset + 1)
        while node is not None:
            if node.type in _TEXT_NODES or node.type.endswith(("expression", "statement")):
                return False
            if node.type in _TYPE_NODES:
                return True
            node = node.parent
        return False
    after = spot.offset + len(spot.replacement)
    node = tree.root_node.descendant_for_byte_range(after, after + 1)
    while node is not None:
        if node.type in _TEXT_NODES:
            return False
        if node.type in ("type_parameter", "ERROR"):
            return True
        node = node.parent
    return False


def parse_repaired(parser: ts.Parser, source: bytes) -> ts.Tree:
    """`parser.parse(source)`, or the tree of a same-length repair of it with less in error.

    All repairs near the errors are tried at once; when that does not help (one
    wrong guess can spoil the rest), each is tried alone and kept if it helps.
    Each round looks again at the errors that are left, since an error the
    grammar recovered from can hide the next one. The work is bounded by a count
    of parses, never by time (the same input gives the same tree), and every kept
    repair is checked again against the final tree: if one no longer holds, the
    file is read as written.
    """
    plain = tree = parser.parse(source)
    if not tree.root_node.has_error:
        return tree
    score, rows = _score(tree)
    if len(rows) > _MAX_ERROR_ROWS:
        return plain  # not a file with a few grammar gaps: nothing here is worth guessing at
    # The first round looks at every line: where errors start says little about where the gaps are once
    # the grammar has recovered wrongly (one error can swallow the file), and a file of a hundred gaps
    # is more than the budget one by one. The batch's repairs that held are tried together next.
    rows = set(range(source.count(b"\n") + 1))
    tried: set[tuple[int, bytes]] = set()
    kept: list[_Spot] = []
    parses = 0
    for _ in range(_MAX_ROUNDS):
        spots = [s for s in _spots(source, rows) if (s.offset, s.replacement) not in tried]
        if not spots:
            break
        alone = spots[:_ONE_BY_ONE] if len(spots) > 1 else []
        # A repair is not tried again once tried alone; the rest wait for the next round.
        tried.update((s.offset, s.replacement) for s in (alone or spots))
        improved = False
        misses = 0
        batches = [spots] + [[s] for s in alone]
        together: list[_Spot] | None = None  # the batch's repairs that held, when some did not
        for batch in batches:
            if parses >= _MAX_PARSES or misses > _MAX_MISSES:
                break
            parses += 1
            misses += 1
            text, attempt = _apply(parser, tree, source, batch)
            attempt_score, attempt_rows = _score(attempt)
            holding = [s for s in batch if _holds(attempt, s)]
            if batch is spots and len(spots) > 1 and 0 < len(holding) < len(batch):
                # A few wrong guesses spoil the batch: the ones that held are tried together next, before
                # the one-by-one tries (a file of a hundred dual signatures is more than the budget alone).
                batches.insert(1, holding)
                together = holding
            if attempt_score < score and len(holding) == len(batch):
                source, tree, score, rows, improved = text, attempt, attempt_score, attempt_rows, True
                kept.extend(batch)
                misses = 0
                if batch is spots or batch is together:
                    break
        if not tree.root_node.has_error or not improved or parses >= _MAX_PARSES:
            break
    if not all(_holds(tree, spot) for spot in kept):
        return plain
    return tree
