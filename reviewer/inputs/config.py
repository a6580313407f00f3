"""Configuration: read from the base commit or `--config`, never from the patch.

    # reviewer.toml
    [rules.lease-renewal]
    release = ["SessionExecutionClaim.clear", "SessionExecutionClaim.release"]

    [severity]
    "lease-renewal/renewal-period" = "should-fix"

    [disable]
    rules = ["bounded-scan/starvation-order"]

    [suppressions]
    patch_may_silence = ["should-fix", "consider"]

    [[accept]]
    id = "3f2a9c0d1e4b5a67"      # a finding's stable id, as the report prints it
    reason = "the lease is renewed by the caller; see ADR-12"
    until = 2027-03-31           # optional: accepted up to and including this day (UTC)

Unknown tables, families, options and rule ids are errors: a typo must not
silently leave a rule on its defaults. Integrity, suppression and
`<family>/internal-error` checks can never be re-rated or disabled (the gate,
the audit trail of silencing, a rule that proved nothing).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any, Mapping

from reviewer.errors import ReviewerError
from reviewer.gate.limits import Limits, shown
from reviewer.report.model import Severity
from reviewer.engine.api import Family
from reviewer.engine.registry import family_group, locked_reason

CONFIG_PATH = "reviewer.toml"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Suppressions:
    """[suppressions]: how far a `reviewer-ignore` comment the patch itself adds may reach.

    A patch that adds a suppression of a must-fix finding is its author
    silencing the bot in the change it judges: by default that finding stays
    blocking and is listed as a refused request. Suppressions already in the
    base keep working for every severity; integrity findings are never silenced.
    """

    # The severities a patch-added suppression may silence (a sorted tuple, so
    # the digest and the documentation read it the same way every time).
    patch_may_silence: tuple[Severity, ...] = (Severity.SHOULD_FIX, Severity.CONSIDER)

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str) -> "Suppressions":
        known = ("patch_may_silence",)
        for key in table:
            if key not in known:
                raise ReviewerError(f"{where} [suppressions] has no option {_key(key)} (known: {', '.join(known)})")
        if "patch_may_silence" not in table:
            return cls()
        value = table["patch_may_silence"]
        names = {s.value for s in Severity}
        if not isinstance(value, list) or not all(isinstance(v, str) and v in names for v in value):
            raise ReviewerError(
                f"{where} [suppressions] patch_may_silence must be a list of severities "
                f"(\"must-fix\", \"should-fix\", \"consider\"), got {shown(value)}"
            )
        return cls(tuple(sorted({Severity(v) for v in value}, key=lambda s: s.rank)))

    def patch_may_silence_value(self) -> list[str]:
        """As reviewer.toml spells it."""
        return [s.value for s in self.patch_may_silence]


_FINDING_ID = re.compile(r"[0-9a-f]{16}")
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@dataclass(frozen=True)
class Acceptance:
    """One `[[accept]]` entry: a maintainer accepting one finding, by its stable id, with a reason.

    The id covers the rule, the path and the normalised code of the reported
    construct (reviewer/report/model.py `Finding.id`), so an acceptance stops
    applying by itself when that code changes. Read only from the base's
    configuration (or --config): a patch cannot accept its own findings.
    """

    id: str
    reason: str
    until: datetime.date | None = None

    def expired(self, today: datetime.date) -> bool:
        return self.until is not None and today > self.until


def _accepts(raw: Any, where: str) -> tuple[Acceptance, ...]:
    """[[accept]] entries, each checked whole: a typo must not accept a different finding or none."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise ReviewerError(f"{where} accept must be an array of tables ([[accept]] entries), got {shown(raw)}")
    out: dict[str, Acceptance] = {}
    for n, entry in enumerate(raw, 1):
        at = f"{where} [[accept]] entry {n}"
        unknown = sorted(set(entry) - {"id", "reason", "until"})
        if unknown:
            raise ReviewerError(f"{at} has no option {_key(unknown[0])} (known: id, reason, until)")
        fid, reason, until = entry.get("id"), entry.get("reason"), entry.get("until")
        if not isinstance(fid, str) or not _FINDING_ID.fullmatch(fid):
            raise ReviewerError(f"{at}: id must be a finding's 16-hex-digit id as the report prints it, got {shown(fid)}")
        if not isinstance(reason, str) or not reason.strip():
            raise ReviewerError(f"{at} (id {fid}): reason must be a non-empty string saying why the finding is accepted")
        if until is not None:
            until = _date(until, f"{at} (id {fid})")
        if fid in out:
            raise ReviewerError(f"{at}: id {fid} is accepted twice")
        out[fid] = Acceptance(fid, reason.strip(), until)
    return tuple(sorted(out.values(), key=lambda a: a.id))


def _date(value: Any, at: str) -> datetime.date:
    # TOML's local date (until = 2027-03-31) or the same as a string; a date-time is refused:
    # an acceptance is for whole days, and a time zone would make the last day ambiguous.
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:  # 2027-02-30
            pass
    raise ReviewerError(f"{at}: until must be a date such as 2027-03-31, got {shown(value)}")


@dataclass(frozen=True)
class Config:
    source: str  # "built-in defaults", "reviewer.toml at <base>", or the --config path
    options: Mapping[str, Mapping[str, Any]]  # family id -> effective options
    severities: Mapping[str, Severity] = field(default_factory=dict)
    disabled: frozenset[str] = frozenset()
    # Options that a rule reads from the command line (e.g. --expect-prev-id).
    overrides: Mapping[str, Any] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    # family id -> the options reviewer.toml sets itself (the rest are defaults,
    # and a vocabulary option left unset may be inferred: reviewer/engine/vocabulary.py).
    configured: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # [model]: role-table entries that replace the model's defaults (see MODEL_SELECTORS/MODEL_NAMES).
    model: Mapping[str, Any] = field(default_factory=dict)
    suppressions: Suppressions = field(default_factory=Suppressions)
    accepts: tuple[Acceptance, ...] = ()

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
        if self.model:
            payload["model"] = self.model
        # Only when set otherwise: a review stored before the table existed keeps its identity.
        if self.suppressions != Suppressions():
            payload["suppressions"] = {"patch_may_silence": self.suppressions.patch_may_silence_value()}
        if self.accepts:
            payload["accept"] = [[a.id, a.reason, a.until.isoformat() if a.until else None] for a in self.accepts]
        if any(self.configured.values()):  # what is set by hand decides what may be inferred
            payload["configured"] = {k: sorted(v) for k, v in sorted(self.configured.items())}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=list).encode()).hexdigest()


_TABLES = {
    "rules": "[rules.<family>]",
    "severity": "[severity]",
    "disable": "[disable]",
    "limits": "[limits]",
    "model": "[model]",
    "suppressions": "[suppressions]",
    "accept": "[[accept]]",
}

# [model]: the role table of the TypeScript model (reviewer/typescript/roles.py), kept as
# validated plain data here so reading a configuration never loads the parser.
MODEL_SELECTORS = ("failure_handlers", "finalizers")  # callee -> which arguments: "all", "last", "values", "<index>"
MODEL_NAMES = ("forks", "commit_hooks", "failure_cases")  # lists of names
MODEL_HOPS = "max_hops"  # how far value resolution follows names, factories and returns
MODEL_MAX_HOPS = 32
_SELECTOR = re.compile(r"all|last|values|[0-9]{1,3}")


def _key(name: str) -> str:
    """A TOML key as it would be written: bare when it can be, else quoted, so
    a key holding a newline cannot break the one-line message."""
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name)


def _table(raw: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    # `rules = []` or `limits = 0` must not read as "no table": that would
    # silently leave every rule on its defaults.
    value = raw.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ReviewerError(f"{where} {name} must be a table ({_TABLES[name]}), got {shown(value)}")
    return value


def _option(where: str, family: Family, key: str, value: Any) -> Any:
    option = family.option(key)
    if option is None:
        known = ", ".join(sorted(family.defaults)) or "none"
        raise ReviewerError(f"{where} [rules.{family.id}] has no option {key!r} (known: {known})")
    why = option.problem(value)
    if why is not None:
        raise ReviewerError(f"{where} [rules.{family.id}] {key} {why}, got {shown(value)}")
    return option.normal(value)


def _options(raw: Mapping[str, Any], families: tuple[Family, ...], where: str) -> dict[str, dict[str, Any]]:
    by_id = {f.id: f for f in families}
    options: dict[str, dict[str, Any]] = {f.id: dict(f.defaults) for f in families}
    for fam_id, table in _table(raw, "rules", where).items():
        if fam_id not in by_id:
            raise ReviewerError(f"{where} [rules.{_key(fam_id)}]: no such rule family (known: {', '.join(sorted(by_id))})")
        if not isinstance(table, dict):
            raise ReviewerError(f"{where} [rules.{fam_id}] must be a table, got {shown(table)}")
        family = by_id[fam_id]
        for key, value in table.items():
            options[fam_id][key] = _option(where, family, key, value)
    return options


def _known_rule(where: str, table: str, rule_id: str, families: tuple[Family, ...], check_ids: set[str]) -> None:
    """Refuse an id [severity]/[disable] may not name: a check that is never
    configurable (integrity, suppression, internal-error: one line saying why),
    or one that does not exist."""
    why = locked_reason(families, rule_id)
    if why:
        raise ReviewerError(f"{where} [{table}] {rule_id!r}: {why}")
    if rule_id not in check_ids:
        raise ReviewerError(f"{where} [{table}] {rule_id!r}: no such rule")


def _severities(raw: Mapping[str, Any], families: tuple[Family, ...], check_ids: set[str], where: str) -> dict[str, Severity]:
    severities: dict[str, Severity] = {}
    for rule_id, value in _table(raw, "severity", where).items():
        _known_rule(where, "severity", rule_id, families, check_ids)
        if not isinstance(value, str) or value not in {s.value for s in Severity}:
            raise ReviewerError(f"{where} [severity] {rule_id}: {shown(value)} is not must-fix, should-fix or consider")
        severities[rule_id] = Severity(value)
    return severities


def _disabled(raw: Mapping[str, Any], families: tuple[Family, ...], check_ids: set[str], where: str) -> frozenset[str]:
    table = _table(raw, "disable", where)
    extra = sorted(set(table) - {"rules"})
    if extra:
        raise ReviewerError(f"{where} [disable] has no option {extra[0]!r}; it takes only rules = [\"<family>/<check>\", ...]")
    rules = table.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise ReviewerError(f"{where} [disable] rules must be a list of rule ids (strings), got {shown(rules)}")
    for rule_id in rules:
        _known_rule(where, "disable", rule_id, families, check_ids)
    return frozenset(rules)


def _model(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """[model]: each key replaces that part of the model's role table; a typo is an error like everywhere else."""
    table = _table(raw, "model", where)
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key in MODEL_SELECTORS:
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and k and "\0" not in k and "\n" not in k and isinstance(v, str) and _SELECTOR.fullmatch(v)
                for k, v in value.items()
            ):
                raise ReviewerError(
                    f"{where} [model] {key} must be a table of callee = \"all\" | \"last\" | \"values\" | \"<argument index>\", "
                    f"got {shown(value)}"
                )
            out[key] = dict(sorted(value.items()))
        elif key in MODEL_NAMES:
            if not isinstance(value, list) or not all(isinstance(v, str) and v and "\0" not in v and "\n" not in v for v in value):
                raise ReviewerError(f"{where} [model] {key} must be a list of names, got {shown(value)}")
            out[key] = sorted(set(value))
        elif key == MODEL_HOPS:
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MODEL_MAX_HOPS:
                raise ReviewerError(f"{where} [model] {key} must be an integer from 1 to {MODEL_MAX_HOPS}, got {shown(value)}")
            out[key] = value
        else:
            known = ", ".join(MODEL_SELECTORS + MODEL_NAMES + (MODEL_HOPS,))
            raise ReviewerError(f"{where} [model] has no key {_key(key)!s} (known: {known})")
    return out


def build_config(raw: Mapping[str, Any], families: tuple[Family, ...], source: str) -> Config:
    """Every value is checked against what its consumer needs: a wrong type must be
    a one-line error naming `source` and the key, never a crash later and never
    a check that quietly stops checking."""
    where = f"{source}:"
    unknown_tables = set(raw) - set(_TABLES)
    if unknown_tables:
        raise ReviewerError(f"{where} unknown table(s) {sorted(unknown_tables)}; expected {', '.join(_TABLES.values())}")
    # Every check a family's catalog entry names, the engine's idioms-not-found note included.
    check_ids = {spec.id for f in families for spec in family_group(f).checks}
    options = _options(raw, families, where)
    severities = _severities(raw, families, check_ids, where)
    disabled = _disabled(raw, families, check_ids, where)
    limits = Limits.from_table(_table(raw, "limits", where), source)
    configured = {
        fam_id: frozenset(table) for fam_id, table in _table(raw, "rules", where).items() if isinstance(table, dict)
    }
    model = _model(raw, where)
    suppressions = Suppressions.from_table(_table(raw, "suppressions", where), where)
    return Config(source, options, severities, disabled, limits=limits, configured=configured, model=model,
                  suppressions=suppressions, accepts=_accepts(raw.get("accept"), where))


def parse_toml(data: bytes, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    # ValueError covers TOMLDecodeError and an integer past Python's digit limit.
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReviewerError(f"{source}: not valid TOML ({exc})") from None
    except RecursionError:
        raise ReviewerError(f"{source}: not valid TOML (arrays or tables nested too deeply)") from None


def load_config_file(path: str, families: tuple[Family, ...]) -> Config:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ReviewerError(f"--config {path}: cannot read ({exc.strerror})") from None
    return build_config(parse_toml(data, path), families, path)


def config_in_tree(data: bytes | None, source: str, families: tuple[Family, ...]) -> Config:
    """The configuration a commit holds: its reviewer.toml's bytes (None: it has none, so the defaults)."""
    return build_config(parse_toml(data, source), families, source) if data is not None else defaults(families)


def defaults(families: tuple[Family, ...]) -> Config:
    return build_config({}, families, "built-in defaults")
