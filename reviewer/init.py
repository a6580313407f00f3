"""`reviewer init`: a proposed reviewer.toml, each inferred name with its evidence (`path:line`).

Reads the base commit's tree only (never a work tree, never a patch) and
prints; it writes nothing into the repository. The same proposals are what a
review uses for a vocabulary option that reviewer.toml leaves unset and whose
defaults name nothing in the base tree (reviewer/engine/vocabulary.py), so
the printed file states, fixed and reviewable, what the bot would otherwise
infer on every review.
"""

from __future__ import annotations

import json
import re

from reviewer.engine.api import Family, Proposal
from reviewer.engine.context import TreeView
from reviewer.engine.facts import init_body
from reviewer.engine.registry import discover
from reviewer.engine.vocabulary import present_names, propose
from reviewer.gitio import open_repo
from reviewer.inputs.config import CONFIG_PATH, Config, build_config, config_in_tree, load_config_file, parse_toml
from reviewer.inputs.pullrequest import resolve_commit

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
_EVIDENCE_SHOWN = 5  # per name list; the rest are counted


def _comment(text: str) -> str:
    """One comment line, whatever a path or name holds (a line break would end the comment)."""
    return "# " + _UNPRINTABLE.sub("?", text)


def _value(names: tuple[str, ...], as_list: bool) -> str:
    return json.dumps(list(names) if as_list else names[0], ensure_ascii=False)


def _family_block(family: Family, proposals: tuple[Proposal, ...], present: set[str], config: Config) -> list[str]:
    by_option = {p.option: p for p in proposals}
    configured = config.configured.get(family.id, frozenset())
    lines = [f"[rules.{family.id}]"]
    for option in family.options:
        # A non-vocabulary option is listed only when the family proposes it (a layer graph the workspace declares).
        if not option.vocabulary and option.name not in by_option:
            continue
        default = option.default
        found_defaults = sorted(present_names(default, present))
        proposal = by_option.get(option.name)
        lines.append(_comment(f"{option.name}: {option.description}"))
        if option.name in configured:
            value = config.for_family(family.id).get(option.name)
            lines.append(_comment(f"  set in {config.source}; kept as written"))
            lines.append(f"{option.name} = {json.dumps(value, ensure_ascii=False)}")
        elif found_defaults:
            lines.append(_comment(f"  the defaults occur in this tree ({', '.join(found_defaults)}): left to them"))
        elif proposal is not None and proposal.names:
            for evidence in proposal.evidence[:_EVIDENCE_SHOWN]:
                lines.append(_comment(f"  {evidence.render()}"))
            if len(proposal.evidence) > _EVIDENCE_SHOWN:
                lines.append(_comment(f"  … and {len(proposal.evidence) - _EVIDENCE_SHOWN} more"))
            lines.append(f"{option.name} = {_value(proposal.names, isinstance(default, list))}")
        else:
            looked = proposal.looked_for if proposal is not None else "this family does not infer it"
            lines.append(_comment(f"  nothing found; looked for {looked}"))
            lines.append(_comment(f"{option.name} = {json.dumps(default, ensure_ascii=False)}  # the default, absent here"))
        lines.append("")
    return lines if len(lines) > 1 else []


def proposal(repo_path: str, base: str, config_path: str | None = None, cache_dir: str | None = None) -> str:
    """The proposed reviewer.toml for the tree of `base` (a commit or any ref naming one).

    What inference proposes is a fact of the tree, the configuration and this code: with `cache_dir`
    it is kept under that key (reviewer/engine/facts.py) and the next `init` of the same tree reads it."""
    families = discover()
    repo = open_repo(repo_path)
    try:
        commit = resolve_commit(repo, base, "--base")
        tree_id = repo.tree_of(commit)
        tree = TreeView(repo, tree_id)
        config = _config(tree, families, config_path)
        header = [
            _comment(f"reviewer.toml proposed by `reviewer init` for {commit}"),
            _comment("Each inferred name follows its evidence (path:line in that commit). Review it, then commit"),
            _comment("it as reviewer.toml: a review uses exactly what is set here; an option left unset falls"),
            _comment("back to the defaults when they name something in the base tree, else to what is inferred."),
        ]
        if config.configured:
            header.append(_comment(f"Only vocabulary options are listed; the other settings of {config.source} are not repeated."))
        header.append("")
        body = init_body(cache_dir, families, config, tree, lambda: [
            line for family, proposals, present in propose(families, config, tree)
            for line in _family_block(family, proposals, present, config)])
        text = "\n".join(header + body).rstrip("\n") + "\n"
    finally:
        repo.close()
    # What is printed must load as it is: a proposal that fails validation is a bug here.
    build_config(parse_toml(text.encode("utf-8"), "reviewer init output"), families, "reviewer init output")
    return text


def _config(tree: TreeView, families: tuple[Family, ...], config_path: str | None) -> Config:
    if config_path:
        return load_config_file(config_path, families)
    return config_in_tree(tree.read(CONFIG_PATH), f"{CONFIG_PATH} at base", families)
