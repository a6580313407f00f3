"""What recovery-revalidation asks of drizzle chains, through the model's one query model
(reviewer/typescript/queries.py): tables, `where` conjuncts, single-row and newest-first reads,
compare-and-set writes. Everything from the syntax tree, through `const`s.
"""

from __future__ import annotations

from typing import Sequence

from reviewer.engine.api import Options
from reviewer.typescript import Call, Expr, Program, Query, builder_query, members_of
from reviewer.typescript import chain_link as link


def whole(call: Call) -> tuple[Call, ...]:
    """The chain `call` opens or sits in, from its first link on."""
    return call.chain


def is_head(call: Call) -> bool:
    return call.chain_position == 0


def query(program: Program, chain: Sequence[Call]) -> Query | None:
    return builder_query(program, chain)


def chain_table(program: Program, chain: Sequence[Call]) -> str | None:
    found = query(program, chain)
    return found.table if found is not None else None


def where_of(chain: Sequence[Call]) -> Expr | None:
    found = link(chain, "where")
    return found.args[0] if found is not None and found.args else None


def is_select(program: Program, chain: Sequence[Call]) -> bool:
    found = query(program, chain)
    return found is not None and found.operation == "select"


def is_recency_read(program: Program, chain: Sequence[Call]) -> bool:
    """A newest-first single-row select: `orderBy(desc(..), ..)` then `.limit(1)` or `.get()`."""
    found = query(program, chain)
    return found is not None and found.operation == "select" and found.newest_first and found.single_row


def is_multi_read(program: Program, chain: Sequence[Call]) -> bool:
    return is_select(program, chain) and link(chain, "all") is not None


def is_cas(program: Program, chain: Sequence[Call]) -> bool:
    """A conditional write of rows (update/delete with a `where`): succeeds only if the row still matches."""
    found = query(program, chain)
    return found is not None and found.operation in ("update", "delete") and found.where is not None \
        and link(chain, "values") is None


def is_reread(program: Program, chain: Sequence[Call]) -> bool:
    """A single-row select by condition: the candidate read again."""
    found = query(program, chain)
    return found is not None and found.operation == "select" and found.where is not None \
        and link(chain, "get") is not None


def promotion_set(program: Program, chain: Sequence[Call], opts: Options) -> Expr | None:
    """The `.set({..})` object of an update of an input table that writes a promoted column (not to null)."""
    found = query(program, chain)
    if found is None or found.operation != "update" or found.table not in opts.input_tables:
        return None
    setter = link(chain, "set")
    if setter is None or not setter.args:
        return None
    members = members_of(program, setter.args[0]) or ()
    for key, value in members:
        if key in opts.promoted_columns and value.text.strip() not in ("null", "undefined"):
            return setter.args[0]
    return None


def chain_lines(chain: Sequence[Call]) -> tuple[int, int]:
    return min(c.line for c in chain), max(c.end_line for c in chain)
