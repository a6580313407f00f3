"""lease-renewal's vocabulary, inferred from the base tree (`reviewer init`, and reviews whose
defaults name nothing there).

A lease API is a set of functions that insert, update or delete rows of a
table with a lease column (or an expiry column next to an owner column); each is sorted by its name into acquire,
renew and release. The lease constant is a top-level constant named like a
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

# A lease column by its name; an expiry alone is a lease only next to an owner (a token's
# expiry is not a lock: an account table with `token_expiry` has no owner to lose it).
LEASE_COLUMN = re.compile(r"(?i)(lease|heartbeat|locked_?until|claimed_?until)")
EXPIRY_COLUMN = re.compile(r"(?i)(expir|deadline)")
OWNER_COLUMN = re.compile(r"(?i)(owner|holder|worker|claimed_?by|locked_?by|instance|process)")
# Sorted by name; a writer whose name says none of these is listed by `reviewer init` but not used.
KINDS = (
    ("acquire", re.compile(r"(?i)^(try_?)?(acquire|claim|take|takeover|grab|lock|reserve|checkout|lease)")),
    ("renew", re.compile(r"(?i)(renew|heartbeat|extend|refresh|touch|keep_?alive|bump)")),
    ("release", re.compile(r"(?i)^(release|clear|unlock|drop|free|relinquish|consume|give_?up|checkin|delete|remove)")),
)
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*(LEASE|TTL)[A-Z0-9_]*$")
_CONSTANT_GREP = r"\b[A-Z][A-Z0-9_]*(LEASE|TTL)[A-Z0-9_]*\s*="
_LOOKED = {
    "acquire": "functions named like acquire/claim/take/lock that write a table with a lease/expiry column",
    "renew": "functions named like renew/heartbeat/extend/refresh that write a table with a lease/expiry column",
    "release": "functions named like release/clear/unlock/drop/delete that write a table with a lease/expiry column",
    "lease_constant": "a top-level constant named like *LEASE* or *TTL* in a file of the lease API",
    "interrupt_hooks": "nothing: interruption commit hooks are not inferred, name them by hand",
}


def infer(corpus: "Corpus") -> tuple[Proposal, ...]:
    leases = [(t, c) for t in vocab.tables(corpus) for c in _lease_columns(t)]
    tables = {t.name for t, _ in leases}
    found: dict[str, dict[str, list[Evidence]]] = {kind: {} for kind, _ in KINDS}
    api_files: set[str] = set()
    for fn, table, line in vocab.writers(corpus, tables):
        kind = next((k for k, pattern in KINDS if pattern.search(fn.name or "")), None)
        if kind is None:
            continue
        api_files.add(fn.path)
        column = next(c for t, c in leases if t.name == table)
        note = f"`{vocab.shown(fn.name or '')}` writes {table}, whose `{column.key}` is a lease/expiry column"
        for name in vocab.spellings(corpus, fn):
            found[kind].setdefault(name, []).append(Evidence(fn.path, line, note))
    no_table = "" if tables else " (no sqliteTable/pgTable/mysqlTable declares a lease column, or an expiry column next to an owner column)"
    proposals = [
        Proposal(kind, tuple(sorted(found[kind])), tuple(e for n in sorted(found[kind]) for e in found[kind][n][:1]),
                 _LOOKED[kind] + no_table)
        for kind, _ in KINDS
    ]
    proposals.append(_lease_constant(corpus, api_files, no_table))
    proposals.append(Proposal("interrupt_hooks", (), (), _LOOKED["interrupt_hooks"]))
    return tuple(proposals)


def _lease_columns(table: vocab.TableDecl) -> list[vocab.Column]:
    direct = table.matching(LEASE_COLUMN)
    if direct:
        return direct
    return table.matching(EXPIRY_COLUMN) if table.matching(OWNER_COLUMN) else []


def _lease_constant(corpus: "Corpus", api_files: set[str], no_table: str) -> Proposal:
    program = corpus.program
    # The API's own files, then the modules they import (a constants file).
    near = set(api_files)
    for path in sorted(api_files):
        module = program.module(path)
        near |= {imp.module for imp in module.imports.values() if imp.module} if module is not None else set()
    for path in sorted(near & set(corpus.candidates([_CONSTANT_GREP])), key=lambda p: (p not in api_files, p)):
        module = program.module(path)
        if module is None:
            continue
        for name in sorted(module.declarations, key=lambda n: (module.declaration_lines(n) or (0, 0), n)):
            lines = module.declaration_lines(name)
            if "." not in name and _CONSTANT.match(name) and module.constant(name) is not None and lines:
                return Proposal("lease_constant", (name,), (Evidence(path, lines[0], f"`{name}` is the lease's length"),),
                                _LOOKED["lease_constant"])
    return Proposal("lease_constant", (), (), _LOOKED["lease_constant"] + no_table)
