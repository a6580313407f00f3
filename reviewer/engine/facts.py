"""Facts about a base tree, computed once and reused by every review on that base.

What inference learns from a base tree (which vocabulary names occur, what
each family inferred with its evidence, which qualified names the tree
declares) depends on nothing but the tree, the configuration and the code
that computed it. A git tree id names the tree's entire content, so

    key = sha256(code digest, base tree id, configuration digest, families, infer)

names the answer exactly: the next review of any patch on the same base, a
re-run, `reviewer pr` after `reviewer review`, reads it instead of grepping
and parsing the tree again. The entry also holds which words of every
vocabulary option occur in the tree, so the "names nothing in the base tree"
check after the rules costs no `git grep` either.

Trust: an entry is plain JSON in the OutcomeCache store (schema, key and
checksum checked, every field's type checked here); anything that does not
check out is a miss and the facts are computed afresh, never read as
"nothing found". A vocabulary whose inference failed (an exception, the time
budget on a loaded machine) is not stored: it must be retried.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from reviewer.engine.api import Evidence, Family, Proposal
from reviewer.engine.context import TreeView
from reviewer.engine.vocabulary import Vocabulary, resolve, words
from reviewer.inputs.config import Config

if TYPE_CHECKING:
    from reviewer.engine.cache import OutcomeCache

log = logging.getLogger("reviewer.engine.facts")

KIND = "vocabulary"
INIT_KIND = "init"
WORDS_KIND = "words"


def resolve_cached(
    cache: "OutcomeCache | None",
    families: Iterable[Family],
    config: Config,
    base: TreeView,
    programs: dict,
    infer: bool,
    budget_seconds: float,
) -> dict[str, Vocabulary]:
    """`vocabulary.resolve`, answered from `cache` when this base tree was resolved before with the
    same configuration and code; stored there when it was not."""
    families = tuple(sorted(families, key=lambda f: f.id))
    key = _key(families, config, base, infer) if cache is not None else None
    if cache is not None and key is not None:
        payload = cache.load_payload(KIND, key)
        if payload is not None:
            try:
                vocabularies, present = _from_data(payload, families)
            except (TypeError, ValueError, KeyError) as exc:
                log.debug("vocabulary entry %s is malformed, ignored: %s", key, exc)
            else:
                base.know_words(present)
                return vocabularies
    vocabularies = resolve(families, config, base, programs, infer=infer, budget_seconds=budget_seconds)
    if cache is not None and key is not None and not any(v.failed for v in vocabularies.values()):
        # The words the check after the rules asks about (`vocabulary.say_when_blind`): every vocabulary option's.
        asked = sorted({w for f in families for o in f.options if o.vocabulary
                        for w in words(vocabularies[f.id].options.get(o.name, o.default))})
        # Asked even when nothing was inferred (no TypeScript changed): the check after the rules asks
        # it of every n/a family, and a stored "absent" must never stand for "not looked up".
        present = base.words_present(asked) if asked else set()
        try:
            cache.store_payload(KIND, key, _data(vocabularies, asked, present))
        except (TypeError, ValueError) as exc:  # options that are not plain data: review uncached
            log.debug("vocabulary not cached: %s", exc)
    return vocabularies


def recall_words(cache: "OutcomeCache | None", base: TreeView) -> dict[str, bool]:
    """Which words earlier reviews of this tree found in its code (a tree's fact: keyed by tree id and
    code digest only), handed to `base` so the rules' own `words_present` questions cost no `git grep`."""
    key = _words_key(base) if cache is not None else None
    payload = cache.load_payload(WORDS_KIND, key) if cache is not None and key is not None else None
    if type(payload) is not dict or not all(type(k) is str and type(v) is bool for k, v in payload.items()):
        return {}
    base.know_words(payload)
    return payload


def keep_words(cache: "OutcomeCache | None", base: TreeView, recalled: Mapping[str, bool]) -> None:
    """Store what this review learnt about the tree's words, when it learnt anything new."""
    if cache is None:
        return
    known = base.known_words()
    if known and known.keys() - recalled.keys():
        cache.store_payload(WORDS_KIND, _words_key(base), dict(sorted(known.items())))


def _words_key(base: TreeView) -> str:
    from reviewer.engine.cache import code_digest

    material = {"kind": WORDS_KIND, "code": code_digest(), "tree": base.tree}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def init_body(cache_dir: str | None, families: Iterable[Family], config: Config, tree: TreeView,
              compute: Callable[[], list[str]]) -> list[str]:
    """`reviewer init`'s proposals for `tree` (its lines), from the cache when this tree was proposed for
    before with the same configuration and code."""
    from reviewer.engine.cache import OutcomeCache

    cache = OutcomeCache(cache_dir) if cache_dir else None
    key = _key(tuple(sorted(families, key=lambda f: f.id)), config, tree, True, kind=INIT_KIND) if cache else None
    if cache is not None and key is not None:
        payload = cache.load_payload(INIT_KIND, key)
        if type(payload) is dict and set(payload) == {"lines"} and type(payload["lines"]) is list \
                and all(type(line) is str for line in payload["lines"]):
            return payload["lines"]
    lines = compute()
    if cache is not None and key is not None:
        cache.store_payload(INIT_KIND, key, {"lines": lines})
    return lines


def _key(families: tuple[Family, ...], config: Config, base: TreeView, infer: bool, kind: str = KIND) -> str | None:
    from reviewer.engine.cache import Uncacheable, _plain, code_digest

    try:
        material = {
            "kind": kind,
            "code": code_digest(),
            "tree": base.tree,
            "config": config.digest,
            "overrides": _plain(dict(config.overrides)),
            "families": [f.id for f in families],
            "infer": infer,
        }
    except Uncacheable:
        return None
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# -- (de)serialisation: every field checked on the way back --------------------------------


def _data(vocabularies: Mapping[str, Vocabulary], asked: list[str], present: set[str]) -> dict[str, Any]:
    from reviewer.engine.cache import _plain

    return {
        "words": {w: w in present for w in asked},
        "families": {
            fid: {
                "options": _plain(dict(v.options)),
                "sources": dict(v.sources),
                "inferred": [
                    {"option": p.option, "names": list(p.names), "looked_for": p.looked_for,
                     "evidence": [[e.path, e.line, e.note] for e in p.evidence]}
                    for p in v.inferred
                ],
                "looked_for": None if v.looked_for is None else dict(v.looked_for),
                "declared": sorted(v.declared),
            }
            for fid, v in sorted(vocabularies.items())
        },
    }


def _from_data(payload: Any, families: tuple[Family, ...]) -> tuple[dict[str, Vocabulary], dict[str, bool]]:
    data = _object(payload, {"words", "families"})
    present = _object(data["words"])
    if not all(isinstance(k, str) and type(v) is bool for k, v in present.items()):
        raise TypeError("words")
    stored = _object(data["families"])
    if sorted(stored) != sorted(f.id for f in families):
        raise ValueError("families differ")
    out: dict[str, Vocabulary] = {}
    for family in families:
        entry = _object(stored[family.id], {"options", "sources", "inferred", "looked_for", "declared"})
        options = _object(entry["options"])
        sources = _strings(_object(entry["sources"]))
        looked = entry["looked_for"]
        out[family.id] = Vocabulary(
            options=_restore(options, family),
            sources=sources,
            inferred=tuple(_proposal(p) for p in _list(entry["inferred"])),
            looked_for=None if looked is None else _strings(_object(looked)),
            declared=frozenset(_str(d) for d in _list(entry["declared"])),
        )
    return out, present


def _restore(options: dict[str, Any], family: Family) -> dict[str, Any]:
    """JSON has no tuples: an option whose default is a tuple gets its tuple back, so a rule sees
    exactly the value a fresh resolve would have given it."""
    out = dict(options)
    for option in family.options:
        if isinstance(option.default, tuple) and isinstance(out.get(option.name), list):
            out[option.name] = tuple(out[option.name])
    return out


def _proposal(data: Any) -> Proposal:
    d = _object(data, {"option", "names", "looked_for", "evidence"})
    evidence = []
    for item in _list(d["evidence"]):
        path, line, note = _list(item)
        if type(line) is not int:
            raise TypeError("evidence line")
        evidence.append(Evidence(_str(path), line, _str(note)))
    return Proposal(_str(d["option"]), tuple(_str(n) for n in _list(d["names"])), tuple(evidence), _str(d["looked_for"]))


def _object(value: Any, fields: set[str] | None = None) -> dict[str, Any]:
    if type(value) is not dict or (fields is not None and set(value) != fields):
        raise TypeError(f"expected an object with fields {sorted(fields or ())}")
    return value


def _list(value: Any) -> list[Any]:
    if type(value) is not list:
        raise TypeError("expected a list")
    return value


def _str(value: Any) -> str:
    if type(value) is not str:
        raise TypeError("expected a string")
    return value


def _strings(value: dict[str, Any]) -> dict[str, str]:
    return {k: _str(v) for k, v in value.items()}
