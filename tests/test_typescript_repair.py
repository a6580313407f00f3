"""Effect's API shapes parse: same-length repairs of two grammar gaps (reviewer/typescript/repair.py)."""

from __future__ import annotations

import tree_sitter as ts
import tree_sitter_typescript as tsts

from reviewer.typescript.parse import Parsers, TYPESCRIPT, error_regions
from reviewer.typescript.repair import parse_repaired

DUAL = b"""import { dual } from "effect/Function"

export const retry: {
  <E>(policy: Policy<E>): <A, R>(self: Effect<A, E, R>) => Effect<A, E, R>
  <A, E, R>(self: Effect<A, E, R>, policy: Policy<E>): Effect<A, E, R>
} = dual(2, (self, policy) => self)

export const both: {
  <B>(
    that: B
  ): <A>(self: A) => [A, B]

  <
    A,
    B
  >(self: A, that: B): [A, B]
} = dual(2, (self, that) => [self, that])

export interface Effect<out A, out E = never, in out R = never> {
  readonly a: A
}

export interface Long<
  out T,
  in R
> {
  readonly t: T
}

export const release = (db: Db, id: string) => db.delete(Claims).where(eq(Claims.id, id))
"""


def _parser() -> ts.Parser:
    return ts.Parser(ts.Language(tsts.language_typescript()))


def _functions(tree: ts.Tree) -> dict[str, tuple[int, int]]:
    """Top-level `export const NAME = ...` declarations and the (row, column) each starts at."""
    found = {}
    for node in tree.root_node.children:
        declaration = node.child_by_field_name("declaration")
        if node.type == "export_statement" and declaration is not None and declaration.type == "lexical_declaration":
            for child in declaration.named_children:
                if child.type == "variable_declarator":
                    found[child.child_by_field_name("name").text.decode()] = child.start_point
    return found


def test_the_grammar_really_fails_on_these_shapes() -> None:
    """The gap is real: without the repair, each of the shapes is an error region."""
    regions = error_regions(_parser().parse(DUAL))
    assert len(regions) >= 4 and regions[0][0] <= 5


def test_dual_signatures_and_variance_parse_with_every_position_kept() -> None:
    tree = parse_repaired(_parser(), DUAL)
    assert not tree.root_node.has_error, error_regions(tree)
    # Same-length repairs: every declaration starts exactly where the source has it.
    lines = DUAL.decode().splitlines()
    for name, (row, column) in _functions(tree).items():
        assert lines[row][column:].startswith(name), name
    assert set(_functions(tree)) == {"retry", "both", "release"}
    assert tree.root_node.end_byte == len(DUAL)


def test_a_real_syntax_error_is_left_as_it_is() -> None:
    source = b"export const a = (1 +\nexport const b = 2\n  (3)\n"
    plain = _parser().parse(source)
    repaired = parse_repaired(_parser(), source)
    assert repaired.root_node.has_error and error_regions(repaired) == error_regions(plain)


def test_code_without_errors_is_never_touched() -> None:
    """An expression continued on the next line is a call; with no error, nothing is repaired."""
    source = b"export const x = compose\n  (a, b)\nexport const y = f<A>\n  <B>(c)\n"
    plain = _parser().parse(source)
    repaired = parse_repaired(_parser(), source)
    assert not plain.root_node.has_error and str(repaired.root_node) == str(plain.root_node)


def test_the_model_reads_the_repaired_tree_and_keeps_the_source_text() -> None:
    from reviewer.typescript.program import Program

    program = Program({"src/effect.ts": DUAL.decode()}.get)
    module = program.module("src/effect.ts")
    assert module is not None and not module.has_errors
    assert program.parse_errors("src/effect.ts") == ()
    # The module's text is the source's, not the repair's: `;` only ever in the tree.
    assert module.text == DUAL.decode() if hasattr(module, "text") else True


def test_parsers_cache_the_repaired_tree_under_the_sources_own_key() -> None:
    parsers = Parsers()
    first = parsers.parse(TYPESCRIPT, DUAL)
    assert not first.root_node.has_error and parsers.parse(TYPESCRIPT, DUAL) is first


class _CountingParser:
    """A parser that counts its parses: the repair's work is bounded by a count, never by time."""

    def __init__(self) -> None:
        self.parser, self.parses = _parser(), 0

    def parse(self, *args):
        self.parses += 1
        return self.parser.parse(*args)


def test_a_file_made_of_errors_costs_a_bounded_number_of_parses() -> None:
    """Found by a hostile review: every line a candidate, none helping, 700 parses of the file."""
    from reviewer.typescript import repair

    for source in (b"x = y\n  (z) ) \n  <A>(b)\n" * 600,
                   b"".join(b"export const f%d: {\n  <A>(a: A): A\n  <B>(b: B): B\n} = g\nx = y\n (z) )\n" % i
                            for i in range(300))):
        counting = _CountingParser()
        parse_repaired(counting, source)
        assert counting.parses <= 1 + repair._MAX_PARSES


def test_text_in_strings_and_calls_in_value_code_are_never_repaired() -> None:
    """A blank must land on a type parameter's modifier, a `;` between type members."""
    source = (b"export interface Eff<out A, in R> { a: A }\n"
              b"const u = 'a, in b'\n"
              b"export const both: {\n  <A>(a: A): A\n  <B>(b: B): B\n} = g\n"
              b"export const x = compose\n  (a, b)\n"
              b"export const broken = (1 +\n")
    tree = parse_repaired(_parser(), source)
    found = {}

    def walk(node):
        if node.type == "string":
            found["string"] = node.text
        if node.type == "call_expression" and node.child_by_field_name("function").text == b"compose":
            found["call"] = node.text
        for child in node.children:
            walk(child)

    walk(tree.root_node)
    assert found["string"] == b"'a, in b'"
    assert found["call"] == b"compose\n  (a, b)"


IMPORT_TYPE = b'''export const activate = (plugins: readonly import("@acme/plugin").Plugin[]) => plugins.length
let host: Parameters<import("@acme/plugin").Plugin["effect"]>[0]
export const load = () => import("./plugins").then((m) => m["default"])
export const release = (db: Db, id: string) => db.delete(Claims).where(eq(Claims.id, id))
'''


def test_an_indexed_access_on_an_import_type_parses_and_value_imports_stay() -> None:
    parser = _parser()
    assert parser.parse(IMPORT_TYPE).root_node.has_error  # the grammar gap is real
    tree = parse_repaired(parser, IMPORT_TYPE)
    assert not tree.root_node.has_error
    # The dynamic import in value code is read as written: its call is still an import.
    calls = [n for n in _walk(tree.root_node) if n.type == "call_expression"]
    assert any(n.text.startswith(b'import("./plugins")') for n in calls)
    assert len(tree.root_node.text) == len(IMPORT_TYPE)


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


TAGGED = b"""export async function page(sql: Sql, n: number) {
  const rows = await sql<RunRow[]>`SELECT * FROM workflow_run WHERE status = 'running' LIMIT ${n}`
  const one = await db.query<{ id: string }>`SELECT id FROM t WHERE id = ${n}`
  const cmp = n < 3 && n > 1 ? `a` : `b`
  return [rows, one, cmp]
}
"""


def test_type_arguments_of_a_tagged_template_parse_and_comparisons_stay() -> None:
    parser = _parser()
    assert parser.parse(TAGGED).root_node.has_error  # the grammar gap is real
    tree = parse_repaired(parser, TAGGED)
    assert not tree.root_node.has_error
    tagged = [n for n in _walk(tree.root_node) if n.type == "call_expression"
              and n.child_by_field_name("arguments").type == "template_string"]
    assert [n.child_by_field_name("function").text for n in tagged] == [b"sql", b"db.query"]
    # `n < 3 && n > 1 ? \`a\`` is a comparison, never blanked.
    assert b"n < 3 && n > 1" in tree.root_node.text
    assert len(tree.root_node.text) == len(TAGGED)


def test_the_model_reads_sql_written_with_type_arguments() -> None:
    from reviewer.typescript import Program, sql_statement

    module = Program({"a.ts": TAGGED.decode()}.get).module("a.ts")
    found = [(s.operation, s.table, s.has_limit) for c in module.calls() if (s := sql_statement(c)) is not None]
    assert found == [("select", "workflow_run", True), ("select", "t", False)]


# A template literal type with escaped backticks (Effect's `MissingSelfGeneric`) near the end of a file,
# a dual signature after a multi-line conditional return type, and value templates with escapes.
ESCAPED = b"""export const greeting = `say \\`hi\\` to ${name}`

export interface Base<S> {
  extend<Extended = never>(
    identifier: string
  ): {
    <NewFields extends Fields>(
      fields: NewFields
    ): [Extended] extends [never] ? MissingSelfGeneric<"Base.extend"> : Inherit<
      Class<Extended, NewFields>,
      S
    >
    <Extension extends Struct>(
      schema: Extension
    ): [Extended] extends [never] ? MissingSelfGeneric<"Base.extend"> : Inherit<
      Class<Extended, Extension>,
      S
    >
  }
}

type MissingSelfGeneric<Usage extends string> =
  `Missing \\`Self\\` generic - use \\`class Self extends ${Usage}<Self>(...)\\``

export const release = (db: Db, id: string) => db.delete(Claims).where(eq(Claims.id, id))
"""


def test_escapes_in_a_template_literal_type_and_a_signature_after_a_long_return_type_parse() -> None:
    parser = _parser()
    plain = parser.parse(ESCAPED)
    assert plain.root_node.has_error  # both gaps are real
    tree = parse_repaired(parser, ESCAPED)
    assert not tree.root_node.has_error, error_regions(tree)
    assert len(tree.root_node.text) == len(ESCAPED)
    assert set(_functions(tree)) == {"greeting", "release"}
    # The value template keeps its escapes: only the type's text was blanked.
    value = next(n for n in _walk(tree.root_node) if n.type == "template_string")
    assert value.text == b"`say \\`hi\\` to ${name}`"
    assert b"\\`" not in next(n for n in _walk(tree.root_node) if n.type == "template_literal_type").text


def test_the_model_reads_a_value_templates_escapes_as_written() -> None:
    from reviewer.typescript import Program

    module = Program({"a.ts": ESCAPED.decode()}.get).module("a.ts")
    assert module is not None and not module.has_errors
    assert module.text == ESCAPED.decode() if hasattr(module, "text") else True
