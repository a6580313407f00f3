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

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from reviewer.engine.api import Family, Proposal
from reviewer.engine.budget import time_budget
from reviewer.engine.context import Corpus, TreeView
from reviewer.inputs.config import Config

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
    blind: tuple[str, ...] = ()  # options whose names occur nowhere in the base tree
    looked_for: Mapping[str, str] | None = None  # option -> what inference searched for, when it found nothing
    failed: str = ""  # why inference raised: the family must not run on a vocabulary it could not decide

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


def words(option_value: Any) -> tuple[str, ...]:
    """The identifiers that must exist for a vocabulary value to name anything (`Claim.clear` -> `Claim`)."""
    values = option_value if isinstance(option_value, (list, tuple)) else [option_value]
    return tuple(str(v).replace("()", "").split(".")[0] for v in values if str(v))


def _unset(family: Family, config: Config) -> list[str]:
    configured = config.configured.get(family.id, frozenset())
    return [o.name for o in family.options if o.vocabulary and o.name not in configured]


class Presence:
    """Which words occur in the base tree's TypeScript, asked of git once per word set and remembered."""

    def __init__(self, base: TreeView) -> None:
        self._base = base
        self._known: dict[str, bool] = {}

    def __call__(self, wanted: Iterable[str]) -> set[str]:
        new = sorted({w for w in wanted if w not in self._known})
        if new:
            found = self._base.words_present(new)
            self._known.update({w: w in found for w in new})
        return {w for w in wanted if self._known.get(w)}


def resolve(
    families: Iterable[Family],
    config: Config,
    base: TreeView,
    programs: dict,
    presence: Presence,
    infer: bool = True,
    budget_seconds: float = 0,
) -> dict[str, Vocabulary]:
    """Each family's effective options and where its vocabulary came from (one `git grep` at most).

    With `infer` False (a change without TypeScript: no family can look at
    anything) the defaults stand and nothing is read.
    """
    families = sorted(families, key=lambda f: f.id)
    effective = {f.id: {**config.for_family(f.id), **{k: v for k, v in config.overrides.items() if k in f.defaults}}
                 for f in families}
    unset = {f.id: _unset(f, config) for f in families}
    # Configured names too: the same pass answers whether they exist (said when they do not).
    wanted = sorted({w for f in families for o in f.options if o.vocabulary for w in words(effective[f.id].get(o.name))})
    present = presence(wanted) if infer and wanted else set()
    absent_of = {f.id: [n for n in unset[f.id] if infer and not set(words(effective[f.id].get(n))) & present]
                 for f in families}
    # One fixed-string pass for what every option to be inferred greps for first.
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
                    options[name] = list(proposal.names) if option and isinstance(option.default, list) else proposal.names[0]
                    sources[name] = INFERRED
                    applied.append(proposal)
                else:
                    looked[name] = proposal.looked_for
        blind = tuple(n for n in absent if sources[n] != INFERRED)
        out[family.id] = Vocabulary(options, sources, tuple(applied), blind, looked)
    return out


def propose(families: Iterable[Family], config: Config, base: TreeView) -> list[tuple[Family, tuple[Proposal, ...], set[str]]]:
    """For `reviewer init`: every family's proposals from the base tree, and which default words occur there."""
    families = sorted(families, key=lambda f: f.id)
    programs: dict = {}
    wanted = sorted({w for f in families for o in f.options if o.vocabulary for w in words(o.default)})
    base.prescan(wanted, [(rx, lits) for f in families for _, rx, lits in f.infer_hints])
    present = base.words_present(wanted) if wanted else set()
    out = []
    memo: dict[str, Any] = {}
    for family in families:
        if family.infer is None:
            continue
        corpus = Corpus(base, family, dict(config.for_family(family.id)), programs, model=config.model, memo=memo)
        out.append((family, family.infer(corpus), present))
    return out
