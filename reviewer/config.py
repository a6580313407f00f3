"""Configuration: read from the base commit or `--config`, never from the patch.

    # reviewer.toml
    [rules.lease-renewal]
    release = ["SessionExecutionClaim.clear", "SessionExecutionClaim.release"]

    [severity]
    "lease-renewal/renewal-period" = "should-fix"

    [disable]
    rules = ["bounded-scan/starvation-order"]

Unknown tables, families, options and rule ids are errors: a typo must not
silently leave a rule on its defaults.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from typing import Any, Mapping

from reviewer.errors import ReviewerError
from reviewer.limits import Limits
from reviewer.model import Severity
from reviewer.registry import Family

CONFIG_PATH = "reviewer.toml"


@dataclass(frozen=True)
class Config:
    source: str  # "built-in defaults", "reviewer.toml at <base>", or the --config path
    options: Mapping[str, Mapping[str, Any]]  # family id -> effective options
    severities: Mapping[str, Severity] = field(default_factory=dict)
    disabled: frozenset[str] = frozenset()
    # Options that a rule reads from the command line (e.g. --expect-prev-id).
    overrides: Mapping[str, Any] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)

    def for_family(self, family_id: str) -> Mapping[str, Any]:
        return self.options.get(family_id, {})

    @property
    def digest(self) -> str:
        payload = {
            "options": self.options,
            "severities": {k: v.value for k, v in self.severities.items()},
            "disabled": sorted(self.disabled),
            "limits": self.limits.__dict__,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=list).encode()).hexdigest()


def _kind(default: Any) -> str:
    for t, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                    ((list, tuple), "a list"), (dict, "a table")):
        if isinstance(default, t):
            return name
    return type(default).__name__


def _type_matches(default: Any, value: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, (list, tuple)):
        return isinstance(value, list)
    if isinstance(default, dict):
        return isinstance(value, dict)
    return isinstance(value, type(default))


def build_config(raw: Mapping[str, Any], families: tuple[Family, ...], source: str) -> Config:
    where = f"{source}:"
    unknown_tables = set(raw) - {"rules", "severity", "disable", "limits"}
    if unknown_tables:
        raise ReviewerError(
            f"{where} unknown table(s) {sorted(unknown_tables)}; expected [rules.<family>], [severity], [disable], [limits]"
        )
    by_id = {f.id: f for f in families}
    check_ids = {spec.id for f in families for spec in f.checks}

    options: dict[str, dict[str, Any]] = {f.id: dict(f.defaults) for f in families}
    for fam_id, table in (raw.get("rules") or {}).items():
        if fam_id not in by_id:
            raise ReviewerError(f"{where} [rules.{fam_id}]: no such rule family (known: {', '.join(sorted(by_id))})")
        if not isinstance(table, dict):
            raise ReviewerError(f"{where} [rules.{fam_id}] must be a table")
        for key, value in table.items():
            if key not in by_id[fam_id].defaults:
                known = ", ".join(sorted(by_id[fam_id].defaults)) or "none"
                raise ReviewerError(f"{where} [rules.{fam_id}] has no option {key!r} (known: {known})")
            if not _type_matches(by_id[fam_id].defaults[key], value):
                raise ReviewerError(
                    f"{where} [rules.{fam_id}] {key} must be {_kind(by_id[fam_id].defaults[key])}, got {value!r}"
                )
            options[fam_id][key] = value

    severities: dict[str, Severity] = {}
    for rule_id, value in (raw.get("severity") or {}).items():
        if rule_id not in check_ids:
            raise ReviewerError(f"{where} [severity] {rule_id!r}: no such rule")
        if rule_id.startswith("integrity/"):
            raise ReviewerError(f"{where} [severity] integrity checks cannot be re-rated")
        try:
            severities[rule_id] = Severity(value)
        except ValueError:
            raise ReviewerError(f"{where} [severity] {rule_id}: {value!r} is not must-fix, should-fix or consider") from None

    disabled_raw = (raw.get("disable") or {}).get("rules", [])
    extra = set((raw.get("disable") or {})) - {"rules"}
    if extra or not isinstance(disabled_raw, list):
        raise ReviewerError(f"{where} [disable] takes only rules = [\"<family>/<check>\", ...]")
    for rule_id in disabled_raw:
        if rule_id not in check_ids:
            raise ReviewerError(f"{where} [disable] {rule_id!r}: no such rule")
    limits = Limits.from_table(raw.get("limits") or {}, source)
    return Config(source, options, severities, frozenset(disabled_raw), limits=limits)


def parse_toml(data: bytes, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ReviewerError(f"{source}: not valid TOML ({exc})") from None


def load_config_file(path: str, families: tuple[Family, ...]) -> Config:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ReviewerError(f"--config {path}: cannot read ({exc.strerror})") from None
    return build_config(parse_toml(data, path), families, path)


def defaults(families: tuple[Family, ...]) -> Config:
    return build_config({}, families, "built-in defaults")
