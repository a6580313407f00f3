"""bounded-scan's vocabulary, inferred from the base tree (`reviewer init`, and reviews whose
defaults name nothing there).

A scanned table is a work queue of many entities: a drizzle table with one
of the columns the family's other options describe (an attempts counter, a
wake flag, a settled guard). A table that is merely listed by the UI is not
one: treating every multi-row read of it as a recovery scan would fire on
ordinary pages. Reads reached from a recovery entry point are scans by their
role already, whatever their table (roles.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.engine.api import Evidence, Options, Proposal
from reviewer.engine.context import ere_escape
from reviewer.rules import _vocabulary as vocab
from reviewer.rules.bounded_scan.spec import OPTIONS

if TYPE_CHECKING:
    from reviewer.engine.context import Corpus


def _queue_columns(opts: Options) -> list[str]:
    return sorted(set(opts.attempts_columns) | set(opts.wake_flags) | set(opts.settled_guards))


def _columns_pattern(columns: list[str]) -> str:
    return r"\b(" + "|".join(ere_escape(c) for c in columns) + r")\b" if columns else r"$^"


# What `infer` greps for with the default options (reviewer/engine/vocabulary.py reads them in one pass).
_DEFAULT_COLUMNS = _queue_columns(Options(OPTIONS, {}))
HINTS = (
    ("tables", vocab.TABLE_CALL, vocab.TABLE_BUILDERS),
    ("tables", _columns_pattern(_DEFAULT_COLUMNS), tuple(_DEFAULT_COLUMNS)),
)


def infer(corpus: "Corpus") -> tuple[Proposal, ...]:
    queue_columns = _queue_columns(corpus.opts)
    found: dict[str, Evidence] = {}
    for table in vocab.tables(corpus, _columns_pattern(queue_columns)):
        columns = table.matching(queue_columns)
        if columns and table.name not in found:
            found[table.name] = Evidence(table.path, columns[0].line,
                                         f"{table.name} has `{columns[0].key}`, a work-queue column")
    looked = ("drizzle tables with a column named in attempts_columns, wake_flags or settled_guards ("
              + ", ".join(sorted(queue_columns)) + ")")
    return (vocab.proposal("tables", found, looked),)
