"""The TypeScript model: what rules ask about patched (and base) source.

Rules import only from here; tree-sitter nodes never leave the package.
"""

from reviewer.typescript.promises import Catch, awaited, catching, finally_blocks
from reviewer.typescript.promises import fails as function_fails
from reviewer.typescript.channel import REFAIL, Treatment, collect_mode, succeeds, treatment
from reviewer.typescript.conditions import Atom, evaluate
from reviewer.typescript.endings import Exit, answers, block_exit, exits, jumps_past, statement_of
from reviewer.typescript.expressions import Call, Expr, Function
from reviewer.typescript.flags import Flag, flag_of, flags_set, switched_off
from reviewer.typescript.flow import consumer, delegated, later_uses
from reviewer.typescript.loops import CollectionLoop, collection_loops, repeating_spans
from reviewer.typescript.callbacks import Callback, Invocation
from reviewer.typescript.mentions import (
    assignments_in,
    error_scope,
    mentions_name,
    mentions_string,
    names_in,
    strings_in,
    throws,
    words_on_lines,
)
from reviewer.typescript.implements import implemented_member
from reviewer.typescript.module import Import, Module
from reviewer.typescript.program import Program
from reviewer.typescript.queries import Query, Term, builder_query, read_where, relational_query, sql_query
from reviewer.typescript.queries import link as chain_link
from reviewer.typescript.reach import run_calls
from reviewer.typescript.references import Unresolved, returned_functions
from reviewer.typescript.roles import DEFAULT_ROLES, Role, RoleTable
from reviewer.typescript.sql import Statement as SqlStatement
from reviewer.typescript.sql import statement as sql_statement
from reviewer.typescript.sql import writes_in_literals
from reviewer.typescript.statements import Guard, GuardPath, guard_path, guards, runs_maybe
from reviewer.typescript.collections import (
    arguments_of,
    copied_from,
    elements_of,
    member_of,
    members_of,
    property_value,
    spread_elements,
)
from reviewer.typescript.builders import Route, Use, callers_of, routes_to, uses_of

__all__ = [
    "Atom",
    "Catch",
    "awaited",
    "catching",
    "finally_blocks",
    "function_fails",
    "Call",
    "Callback",
    "DEFAULT_ROLES",
    "Exit",
    "Expr",
    "Flag",
    "Function",
    "Guard",
    "GuardPath",
    "Import",
    "Invocation",
    "Module",
    "Program",
    "Role",
    "RoleTable",
    "Unresolved",
    "answers",
    "block_exit",
    "consumer",
    "delegated",
    "evaluate",
    "exits",
    "flag_of",
    "flags_set",
    "guard_path",
    "runs_maybe",
    "guards",
    "jumps_past",
    "later_uses",
    "mentions_name",
    "mentions_string",
    "repeating_spans",
    "CollectionLoop",
    "collection_loops",
    "returned_functions",
    "run_calls",
    "names_in",
    "statement_of",
    "strings_in",
    "switched_off",
    "throws",
    "words_on_lines",
    "assignments_in",
    "error_scope",
    "arguments_of",
    "copied_from",
    "elements_of",
    "member_of",
    "members_of",
    "property_value",
    "spread_elements",
    "Route",
    "Use",
    "callers_of",
    "routes_to",
    "uses_of",
    "REFAIL",
    "Treatment",
    "collect_mode",
    "succeeds",
    "treatment",
    "SqlStatement",
    "sql_statement",
    "writes_in_literals",
    "implemented_member",
    "Query",
    "Term",
    "builder_query",
    "chain_link",
    "read_where",
    "relational_query",
    "sql_query",
]
