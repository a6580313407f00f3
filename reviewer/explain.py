"""`reviewer rules --explain ID`: what a rule checks, why, a bad and a good example."""

from __future__ import annotations

from reviewer.errors import ReviewerError
from reviewer.registry import Family


def explain(families: tuple[Family, ...], rule_id: str) -> str:
    for fam in families:
        if rule_id == fam.id:
            lines = [f"{fam.id}: {fam.summary}", "", "Checks:"]
            lines += [f"  {s.id:<48} {s.severity.value:<10} {s.summary}" for s in fam.checks]
            if fam.defaults:
                lines += ["", f"Options ([rules.{fam.id}] in reviewer.toml):"]
                lines += [f"  {k} = {v!r}" for k, v in sorted(fam.defaults.items())]
            return "\n".join(lines) + "\n"
        for spec in fam.checks:
            if spec.id == rule_id:
                out = [f"{spec.id} ({spec.severity.value})", "", spec.title, "", f"What it checks: {spec.summary}"]
                if spec.why:
                    out += ["", f"Why it matters: {spec.why}"]
                if spec.bad:
                    out += ["", "Bad:", *("    " + ln for ln in spec.bad.strip("\n").splitlines())]
                if spec.good:
                    out += ["", "Good:", *("    " + ln for ln in spec.good.strip("\n").splitlines())]
                return "\n".join(out) + "\n"
    known = sorted([f.id for f in families] + [s.id for f in families for s in f.checks])
    raise ReviewerError(f"--explain {rule_id!r}: no such rule (try `reviewer rules`; known: {', '.join(known[:8])}...)")


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return str(value)


def reference(families: tuple[Family, ...]) -> str:
    """The rules reference in Markdown, as the README carries it."""
    out: list[str] = []
    for fam in families:
        out += [f"### `{fam.id}`", "", fam.summary, ""]
        if fam.defaults:
            out += ["Options (`[rules." + fam.id + "]`):", "", "```toml"]
            out += [f"{key} = {_toml_value(value)}" for key, value in sorted(fam.defaults.items())]
            out += ["```", ""]
        for spec in fam.checks:
            out += [f"#### `{spec.id}` ({spec.severity.value})", "", f"**{spec.title}.** {spec.summary}", ""]
            if spec.why:
                out += [f"*Why it matters.* {spec.why}", ""]
            if spec.bad:
                out += ["Bad:", "", "```ts", spec.bad.strip("\n"), "```", ""]
            if spec.good:
                out += ["Good:", "", "```ts", spec.good.strip("\n"), "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"
