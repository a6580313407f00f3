"""lease-renewal's vocabulary, inferred from the base tree (`reviewer init`, and reviews whose
defaults name nothing there).

A lease API is a set of functions that insert, update or delete rows of a
table with a lease column (or an expiry column next to an owner column), or of
a table that raw SQL takes by compare-and-set on a time (a write that sets a
time column it also bounds: `SET until = .. WHERE until < now()`). A raw SQL
write is sorted by what it does (a delete or an update that only clears
releases, an insert acquires, an update that only moves times renews, one that
also writes other columns takes over); a drizzle write by its function's name. The lease constant is a top-level constant named like a
lease or TTL in a file of that API. An owner column alone is not a lease
(an event sequence may have an owner and no expiry), so nothing is inferred
without a time-bound column: a guessed API would make the family fire on
code that is not a claim.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from reviewer.engine.api import Evidence, Proposal
from reviewer.rules import _vocabulary as vocab

if TYPE_CHECKING:
    from reviewer.engine.context import Corpus
    from reviewer.typescript import SqlStatement

# A lease column by the words of its name (`lease_until`, `leaseExpiresAt`; not `release_date`).
# An expiry or a heartbeat alone is a lease only next to an owner: a token's expiry is not a
# lock (an account table with `token_expiry` has no owner to lose it).
LEASE_WORDS = frozenset({"lease"})
# A heartbeat alone is liveness, not ownership (a device table's `last_heartbeat_at`):
# like an expiry, it is a lease only next to an owner column.
BEAT_WORDS = frozenset({"heartbeat"})
UNTIL_WORDS = frozenset({"locked", "claimed", "held"})
OWNER_WORDS = frozenset({"owner", "holder", "worker", "instance", "process", "claimant", "runner"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


def is_lease_column(name: str) -> bool:
    words = _words(name)
    return bool(LEASE_WORDS & set(words)) or any(
        a in UNTIL_WORDS and b == "until" for a, b in zip(words, words[1:]))


def is_expiry_column(name: str) -> bool:
    # `valid_until`, `lock_ttl`: a time a hold runs out at (a lease only next to an owner column, as above)
    return any(w.startswith("expir") or w in ("deadline", "until", "ttl") or w in BEAT_WORDS for w in _words(name))


def is_owner_column(name: str) -> bool:
    """`owner_id`, `holder`, `claimed_by`; not `created_by` (an author owns no lock)."""
    words = _words(name)
    return bool(OWNER_WORDS & set(words)) or any(
        a in UNTIL_WORDS | {"leased", "owned", "taken"} and b == "by" for a, b in zip(words, words[1:]))


# Sorted by name; a writer whose name says none of these is listed by `reviewer init` but not used.
KINDS = (
    ("acquire", re.compile(r"(?i)^(try_?)?(acquire|claim|take|takeover|grab|lock|reserve|checkout|lease)")),
    ("renew", re.compile(r"(?i)(renew|heartbeat|extend|refresh|touch|keep_?alive|bump)")),
    ("release", re.compile(r"(?i)^(release|clear|unlock|drop|free|relinquish|consume|give_?up|checkin|delete|remove)")),
)
# The lease and expiry column names above, spelt for git's extended regexes (no `(?i)`).
_COLUMNS_GREP = ("[Ll]ease|LEASE|[Hh]eartbeat|HEARTBEAT|[Ll]ocked_?[Uu]ntil|LOCKED_?UNTIL|[Cc]laimed_?[Uu]ntil|CLAIMED_?UNTIL"
                 "|[Ee]xpir|EXPIR|[Dd]eadline|DEADLINE|[Uu]ntil|UNTIL|[Tt]tl|TTL")
# `LEASE_MS`, `CLAIM_TTL`, `RUN_LEASE_SECONDS` (the word may open the name).
_CONSTANT = re.compile(r"^(?=[A-Z])[A-Z0-9_]*(LEASE|TTL)[A-Z0-9_]*$")
_CONSTANT_GREP = r"\b[A-Z0-9_]*(LEASE|TTL)[A-Z0-9_]*\s*="
# What `infer` greps for first (reviewer/engine/vocabulary.py reads them in one pass).
# Every match of _COLUMNS_GREP contains one of these fixed strings (git's fast path narrows, `re` decides).
_COLUMN_LITERALS = ("lease", "Lease", "LEASE", "heartbeat", "Heartbeat", "HEARTBEAT", "ocked", "OCKED",
                    "laimed", "LAIMED", "xpir", "XPIR", "eadline", "EADLINE", "until", "Until", "UNTIL",
                    "ttl", "Ttl", "TTL")
HINTS = (
    *((option, vocab.TABLE_CALL, vocab.TABLE_BUILDERS) for option in ("acquire", "renew", "release", "lease_constant")),
    *((option, _COLUMNS_GREP, _COLUMN_LITERALS) for option in ("acquire", "renew", "release", "lease_constant")),
    ("lease_constant", _CONSTANT_GREP, ("LEASE", "TTL")),
)
_LOOKED = {
    "acquire": "functions named like acquire/claim/take/lock that write a table with a lease/expiry column",
    "renew": "functions named like renew/heartbeat/extend/refresh that write a table with a lease/expiry column",
    "release": "functions named like release/clear/unlock/drop/delete that write a table with a lease/expiry column",
    "lease_constant": "a top-level constant named like *LEASE* or *TTL* in a file of the lease API",
    "interrupt_hooks": "nothing: interruption commit hooks are not inferred, name them by hand",
}


def infer(corpus: "Corpus") -> tuple[Proposal, ...]:
    leases = [(t, c) for t in vocab.tables(corpus, _COLUMNS_GREP) for c in _lease_columns(t)]
    # A table raw SQL takes by compare-and-set on a time is a lease whatever its columns are called.
    declared = {t.sql_name for t, _ in leases}
    leases += [(t, c) for t in vocab.compare_and_set_tables(corpus) if t.sql_name not in declared for c in t.columns]
    tables = {t.name for t, _ in leases}
    found: dict[str, dict[str, Evidence]] = {kind: {} for kind, _ in KINDS}
    api_files: set[str] = set()
    columns = {t.name: {c.sql for tt, c in leases if tt.name == t.name} for t, _ in leases}
    for writer in vocab.writers(corpus, list({t.name: t for t, _ in leases}.values())):
        fn, table, line = writer.fn, writer.table, writer.line
        kind = _kind_by_shape(writer.statement, columns.get(table, set())) or next(
            (k for k, pattern in KINDS if pattern.search(fn.name or "")), None)
        if kind is None:
            continue
        api_files.add(fn.path)
        column = next(c for t, c in leases if t.name == table)
        note = f"`{vocab.shown(fn.name or '')}` writes {table}, whose `{column.key}` is a lease/expiry column"
        for name in vocab.spellings(corpus, fn):
            found[kind].setdefault(name, Evidence(fn.path, line, note))
    no_table = "" if tables else (" (no sqliteTable/pgTable/mysqlTable declares a lease column, or an expiry column next to an"
                                  " owner column, and no raw SQL write sets a time column it also bounds)")
    proposals = [vocab.proposal(kind, found[kind], _LOOKED[kind] + no_table) for kind, _ in KINDS]
    proposals.append(_lease_constant(corpus, api_files, no_table))
    proposals.append(Proposal("interrupt_hooks", (), (), _LOOKED["interrupt_hooks"]))
    return tuple(proposals)


def _kind_by_shape(statement: "SqlStatement | None", lease_columns: set[str]) -> str | None:
    """What a raw SQL write does to a lease, whatever its function is called: a delete, or an update
    that only clears, releases; an insert that writes a lease column takes; an update that only moves times renews, one that
    also writes the holder takes over. None for drizzle's builders (their name decides)."""
    if statement is None:
        return None
    if statement.operation == "delete":
        return "release"
    if statement.operation == "insert":
        # A row enqueued without a holder or an expiry (a queue's offer) takes nothing; an INSERT
        # without a column list writes every column, the lease's among them.
        return "acquire" if not statement.writes or set(statement.writes) & lease_columns else None
    if statement.operation != "update" or not set(statement.writes) & lease_columns:
        return None
    if statement.clears:
        return "release"
    return "renew" if all(vocab.is_time_column(c) for c in statement.writes) else "acquire"


def _lease_columns(table: vocab.TableDecl) -> list[vocab.Column]:
    direct = [c for c in table.columns if is_lease_column(c.key) or is_lease_column(c.sql)]
    if direct:
        return direct
    owned = any(is_owner_column(c.key) or is_owner_column(c.sql) for c in table.columns)
    return [c for c in table.columns if is_expiry_column(c.key) or is_expiry_column(c.sql)] if owned else []


def _lease_constant(corpus: "Corpus", api_files: set[str], no_table: str) -> Proposal:
    program = corpus.program
    # The API's own files, then the modules they import (a constants file).
    near = set(api_files)
    for path in sorted(api_files):
        module = program.module(path)
        near |= {imp.module for imp in module.imports.values() if imp.module} if module is not None else set()
    for path in sorted(vocab.code_paths(corpus, corpus.candidates([_CONSTANT_GREP], within=near)),
                       key=lambda p: (p not in api_files, p)):
        module = program.module(path)
        if module is None:
            continue
        for name in sorted(module.declarations, key=lambda n: (module.declaration_lines(n) or (0, 0), n)):
            lines = module.declaration_lines(name)
            if "." not in name and _CONSTANT.match(name) and module.constant(name) is not None and lines:
                return Proposal("lease_constant", (name,), (Evidence(path, lines[0], f"`{name}` is the lease's length"),),
                                _LOOKED["lease_constant"])
    return Proposal("lease_constant", (), (), _LOOKED["lease_constant"] + no_table)
