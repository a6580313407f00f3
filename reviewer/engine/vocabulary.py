"""Which names each family looks for: configured, its defaults, or inferred from the base tree.

A family's vocabulary options (`Option(vocabulary=True)`) name the code base's
own API, tables and hooks. For each one, in order:

1. set in `reviewer.toml`: used as written, always;
2. not set, and a default name occurs in the base tree: the defaults;
3. not set, no default occurs: what the family infers from the base tree
   (`Family.infer`, the same proposals `reviewer init` prints), when it
   infers anything; else the defaults, and the family says it is blind.

The base tree is the reviewed commit's parent, never the patch: a patch
cannot teach the reviewer to look away. One `git grep` answers which default
names occur; inference runs only for a family that needs it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from reviewer.engine.api import Family, Proposal
from reviewer.engine.budget import time_budget
from reviewer.engine.context import Corpus, TreeView
from reviewer.engine.registry import IDIOMS_NOT_FOUND
from reviewer.inputs.config import Config
from reviewer.report.model import Finding, InvariantResult, InvariantStatus, Severity


class _InferenceOverBudget(Exception):
    pass


CONFIGURED = "configured"
DEFAULT = "default"
INFERRED = "inferred"


@dataclass(frozen=True)
class Vocabulary:
    """How one family's vocabulary options were decided for this review."""

    options: Mapping[str, Any]  # the family's effective options, inferred names applied
    sources: Mapping[str, str]  # vocabulary option -> CONFIGURED | DEFAULT | INFERRED
    inferred: tuple[Proposal, ...] = ()  # the proposals applied
    looked_for: Mapping[str, str] | None = None  # option -> what inference searched for, when it found nothing
    failed: str = ""  # why inference raised: the family must not run on a vocabulary it could not decide
    # Qualified names the base tree declares without writing them whole (`namespace Lease { drop }`).
    declared: frozenset[str] = frozenset()

    @property
    def source(self) -> str:
        """One word for the report: configured, default, inferred, mixed; "" without vocabulary options."""
        kinds = set(self.sources.values())
        if not kinds:
            return ""
        return kinds.pop() if len(kinds) == 1 else "mixed"

    def statement(self) -> str:
        """What the basis says when names were inferred: each option, its names and their evidence."""
        if not self.inferred:
            return ""
        parts = []
        for proposal in self.inferred:
            where = proposal.evidence[0].path + ":" + str(proposal.evidence[0].line) if proposal.evidence else ""
            parts.append(f"{proposal.option} = {', '.join(proposal.names)}" + (f" ({where})" if where else ""))
        return "vocabulary inferred from the base tree: " + "; ".join(parts)


def _values(option_value: Any) -> tuple[str, ...]:
    values = option_value if isinstance(option_value, (list, tuple)) else [option_value]
    return tuple(str(v).replace("()", "") for v in values if str(v))


def words(option_value: Any) -> tuple[str, ...]:
    """What to look for in code to judge a vocabulary value: each name whole (`Step.Ended`), its first
    segment (`Step`, which an aliased import still writes) and its last (`Ended`, which a declaration
    inside a namespace writes alone)."""
    return tuple(dict.fromkeys(w for v in _values(option_value) for w in (v, v.split(".")[0], v.split(".")[-1])))


def names_exactly(option_value: Any, present: set[str] | frozenset[str]) -> bool:
    """Is some name of the value written whole in code (`SessionEvent.Step.Ended`)?"""
    return any(v in present for v in _values(option_value))


def names_loosely(option_value: Any, present: set[str] | frozenset[str]) -> bool:
    """Is the first segment of some name written (`Claim.clear` through `import { Claim as C }`)?
    Weaker: a code base's own `Step` type is not a `Step.Ended` event."""
    return any(v.split(".")[0] in present for v in _values(option_value))


def declared_names(values: Iterable[str], present: set[str] | frozenset[str], base: TreeView, programs: dict,
                   model: Mapping[str, Any]) -> frozenset[str]:
    """Which qualified names (not written whole) the base tree declares: a member of a namespace or object
    (`namespace Lease { export const drop }` declares `Lease.drop`), or of the module a file imports under
    the name's first segment. Asked only of names whose first and last segments both occur (`present`),
    and only files writing both are read."""
    from reviewer.engine.context import _program_of, word_pattern

    found: set[str] = set()
    for value in sorted(set(values)):
        parts = value.split(".")
        if len(parts) < 2 or value in present or parts[0] not in present or parts[-1] not in present:
            continue
        if "base" not in programs:
            programs["base"] = _program_of(base, {}, model)
        program = programs["base"]
        rest = ".".join(parts[1:])
        for path in base.files_matching([word_pattern(parts[0]), word_pattern(parts[-1])], all_match=True):
            module = program.module(path)
            if module is None:
                continue
            if value in module.declarations or (module.namespace == parts[0] and rest in module.declarations):
                found.add(value)
                break
            imp = module.imports.get(parts[0])
            target = program.module(imp.module) if imp is not None and imp.module else None
            if target is not None and (rest in target.declarations or f"{imp.imported}.{rest}" in target.declarations):
                found.add(value)
                break
    return frozenset(found)


def present_names(option_value: Any, present: set[str] | frozenset[str]) -> list[str]:
    """The names of the value written whole in code."""
    return [v for v in _values(option_value) if v in present]


def _unset(family: Family, config: Config) -> list[str]:
    configured = config.configured.get(family.id, frozenset())
    return [o.name for o in family.options if o.vocabulary and o.name not in configured]


def resolve(
    families: Iterable[Family],
    config: Config,
    base: TreeView,
    programs: dict,
    infer: bool = True,
    budget_seconds: float = 0,
) -> dict[str, Vocabulary]:
    """Each family's effective options and where its vocabulary came from: one `git grep` for which
    names occur and for what inference reads first when an option must be inferred.

    With `infer` False (a change without TypeScript: no family can look at
    anything) the defaults stand and nothing is read.
    """
    families = sorted(families, key=lambda f: f.id)
    effective = {f.id: {**config.for_family(f.id), **{k: v for k, v in config.overrides.items() if k in f.defaults}}
                 for f in families}
    unset = {f.id: _unset(f, config) for f in families}
    # Configured names too: the same pass answers whether they exist (said when they do not).
    wanted = sorted({w for f in families for o in f.options if o.vocabulary for w in words(effective[f.id].get(o.name))})
    if infer:
        # One whole-tree pass for the words and for what inference of any unset option greps first:
        # which options must be inferred is known only once the words are, and the hints of those
        # that need none are then never judged.
        base.hold(set(wanted) | {lit for f in families for option, _, lits in f.infer_hints if option in unset[f.id]
                                 for lit in lits})
    try:
        return _resolve(families, config, base, programs, infer, budget_seconds, effective, unset, wanted)
    finally:
        base.release()


def _resolve(families: list[Family], config: Config, base: TreeView, programs: dict, infer: bool,
             budget_seconds: float, effective: dict[str, dict[str, Any]], unset: dict[str, list[str]],
             wanted: list[str]) -> dict[str, Vocabulary]:
    present = base.words_present(wanted) if infer and wanted else set()
    # An option is inferred unless one of its defaults is written whole in the base tree: a default
    # whose first segment alone occurs (an alias, or a type of the same name) is kept beside what
    # inference finds, and stands alone when inference finds nothing.
    vocabulary_values = {v for f in families for o in f.options if o.vocabulary for v in _values(effective[f.id].get(o.name))}
    declared = declared_names(vocabulary_values, present, base, programs, config.model) if infer else frozenset()
    known = present | declared
    absent_of = {f.id: [n for n in unset[f.id] if infer and not names_exactly(effective[f.id].get(n), known)]
                 for f in families}
    # What every option to be inferred greps for first (judged from the lines `hold` kept).
    hints = [(rx, lits) for f in families for option, rx, lits in f.infer_hints if option in absent_of[f.id]]
    if hints:
        base.prescan([], hints)
    out: dict[str, Vocabulary] = {}
    memo: dict[str, Any] = {}
    for family in families:
        options = dict(effective[family.id])
        sources = {o.name: CONFIGURED for o in family.options if o.vocabulary and o.name not in unset[family.id]}
        absent = absent_of[family.id]
        sources.update({n: DEFAULT for n in unset[family.id]})
        applied: list[Proposal] = []
        looked: dict[str, str] = {}
        if absent and family.infer is not None:
            corpus = Corpus(base, family, options, programs, wanted=frozenset(absent), model=config.model, memo=memo)
            try:
                with time_budget(budget_seconds, _InferenceOverBudget):
                    proposals = {p.option: p for p in family.infer(corpus)}
            except _InferenceOverBudget:
                out[family.id] = Vocabulary(options, sources, failed=f"it exceeded the time budget of {budget_seconds:g} s")
                continue
            except Exception as exc:  # noqa: BLE001 - fail closed per family: it becomes `error`, never "n/a"
                out[family.id] = Vocabulary(options, sources, failed=f"{type(exc).__name__}: {exc}")
                continue
            for name in absent:
                proposal = proposals.get(name)
                if proposal is None:
                    continue
                if proposal.names:
                    option = family.option(name)
                    kept = [v for v in _values(options.get(name)) if names_loosely(v, present)]
                    if option and isinstance(option.default, list):
                        options[name] = list(dict.fromkeys([*proposal.names, *kept]))
                    else:
                        options[name] = proposal.names[0]
                    sources[name] = INFERRED
                    applied.append(proposal)
                else:
                    looked[name] = proposal.looked_for
        out[family.id] = Vocabulary(options, sources, tuple(applied), looked, declared=declared)
    return out


def propose(families: Iterable[Family], config: Config, base: TreeView) -> list[tuple[Family, tuple[Proposal, ...], set[str]]]:
    """For `reviewer init`: every family's proposals from the base tree, and which default words occur there."""
    families = sorted(families, key=lambda f: f.id)
    programs: dict = {}
    wanted = sorted({w for f in families for o in f.options if o.vocabulary for w in words(o.default)})
    base.prescan(wanted, [(rx, lits) for f in families for _, rx, lits in f.infer_hints])
    present = base.words_present(wanted) if wanted else set()
    defaults = {v for f in families for o in f.options if o.vocabulary for v in _values(o.default)}
    present = set(present) | declared_names(defaults, present, base, programs, config.model)
    out = []
    memo: dict[str, Any] = {}
    for family in families:
        if family.infer is None:
            continue
        corpus = Corpus(base, family, dict(config.for_family(family.id)), programs, model=config.model, memo=memo)
        out.append((family, family.infer(corpus), present))
    return out


# ------------------------------------------------------------------ names that name nothing


def _asked(result: InvariantResult, family: Family, vocab: Vocabulary) -> dict[str, tuple[str, ...]]:
    """The options whose names must exist for `result` to be honest, with those names' identifiers.

    An `n/a` family: all of them (n/a must not mean "could not look"). A family that ran: only
    those set by hand (a misspelt name silently narrows it). A family in error: none (it says why).
    """
    if result.status is InvariantStatus.ERROR:
        return {}
    idle = result.status is InvariantStatus.NOT_APPLICABLE
    return {o.name: _values(vocab.options.get(o.name, o.default)) for o in family.options
            if o.vocabulary and (idle or vocab.sources.get(o.name) == CONFIGURED)}


def say_when_blind(
    results: list[InvariantResult],
    families: tuple[Family, ...],
    vocabularies: Mapping[str, Vocabulary],
    base: TreeView,
    config: Config,
) -> list[InvariantResult]:
    """Names that occur nowhere in the base tree's code are said out loud: in the basis and in a
    consider note `<family>/idioms-not-found`, with what inference looked for when it found nothing.

    At most one more `git grep` (the words are usually known already), only when there is something to ask.
    """
    by_id = {f.id: f for f in families}
    asked = {r.id: names for r in results if (names := _asked(r, by_id[r.id], vocabularies[r.id]))}
    if not asked:
        return results
    present = base.words_present(sorted({w for names in asked.values() for vs in names.values() for w in words(vs)}))
    out = []
    for result in results:
        names = asked.get(result.id, {})
        # A name set by hand must be written whole; a default may be reached through an alias.
        vocab = vocabularies[result.id]
        known = present | vocab.declared
        missing = [name for name, vs in names.items() if vs and not (
            names_exactly(vs, known) if vocab.sources.get(name) == CONFIGURED else names_loosely(vs, present))]
        if not missing:
            out.append(result)
            continue
        kinds = " and ".join(sorted({vocab.sources.get(n, DEFAULT) for n in missing}))
        shown = f"{kinds} " + ", ".join(f"`{n}`" for n in missing)
        looked = vocab.looked_for or {}
        searched = "; ".join(f"for {name}, {looked[name]}" for name in missing if looked.get(name))
        findings = result.findings
        rule = f"{result.id}/{IDIOMS_NOT_FOUND}"
        if rule not in config.disabled:
            findings = (*findings, _note(result, rule, shown, {n: names[n] for n in missing}, searched, config))
        summary = f"{result.summary}; {shown} name nothing in the base tree, so it could not look for them"
        if searched:
            summary += " (inference from the base tree found none either)"
        out.append(dataclasses.replace(result, summary=summary, findings=findings))
    return out


def _note(result: InvariantResult, rule: str, shown: str, missing: Mapping[str, tuple[str, ...]], searched: str,
          config: Config) -> Finding:
    names = "; ".join(f"{name} = {', '.join(ws)}" for name, ws in missing.items())
    if result.status is InvariantStatus.NOT_APPLICABLE:
        opening = (
            f"{result.id} found nothing to check, and no TypeScript file of the base tree names any of "
            f"these ({names}), so the checks that look for them cannot fire here: `n/a` may mean the "
            f"family did not know what to look for, not that the patch is safe. "
        )
    else:
        opening = (
            f"{result.id} checked what it could, but no TypeScript file of the base tree names any of these "
            f"names set in {config.source} ({names}), so the checks that look for them cannot fire here: "
            f"a misspelt or stale name silently narrows the review. "
        )
    return Finding(
        rule=rule,
        severity=config.severities.get(rule, Severity.CONSIDER),
        title=f"{result.id}: {shown} name nothing in this code base",
        message=(
            opening
            + (f"Inference from the base tree found nothing either (it looked {searched}). " if searched else "")
            + f"Set the code base's own names under [rules.{result.id}] (`reviewer init` proposes them)."
        ),
        location=None,
        anchor=f"{rule}:{','.join(missing)}",
    )
