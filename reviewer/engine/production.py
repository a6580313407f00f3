"""Which files are the code base's own production code: what every family examines by default.

A family reviews code by what it is, not by the folder it sits in; the only
files left out by default are those that are not the service's code:

* tests, fixtures, mocks and benchmarks, by the conventions of the JavaScript ecosystem
  (`test/`, `tests/`, `__tests__/`, `e2e/`, `fixtures/`, `bench/`, `perf/`, `*.test.*`, `*.spec.*`,
  type-level tests such as `typetest/` and `*.tst.ts`, ...);
* vendored and built code (`node_modules/`, `vendor/`, `third_party/`,
  `dist/`, `build/`, minified bundles, declaration files);
* front-end code (`is_ui`: JSX files, modules importing a UI framework), which
  renders state and holds no lease: the template leaves it out of every family;
* what the repository itself marks with `.gitattributes`: `linguist-generated`,
  `linguist-vendored` or `linguist-documentation` (GitHub's own marks, set or
  unset as git resolves them: the last matching line wins, deeper files last).

`.gitattributes` is read from the base tree, never from the patch: a patch
cannot mark its own code as generated to have it skipped. Paths in
`reviewer.toml` only narrow what is left.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Callable, Iterable

from reviewer.engine import globs

# Conventional locations of code that is not the service's own.
NOT_PRODUCTION = (
    "**/test/**", "**/tests/**", "**/__tests__/**", "**/e2e/**", "**/__mocks__/**",
    "**/fixtures/**", "**/__fixtures__/**", "**/testdata/**", "**/test-utils/**",
    "**/*.test.*", "**/*.spec.*", "**/*.bench.*", "**/*.stories.*",
    # type-level tests (tstyche, tsd, dtslint): assertions about types, never run as the service
    "**/typetest/**", "**/typetests/**", "**/type-tests/**", "**/dtslint/**", "**/*.tst.*", "**/*.test-d.*",
    "**/bench/**", "**/benchmark/**", "**/benchmarks/**", "**/perf/**", "**/perfTest/**", "**/perf-test/**",
    "**/node_modules/**", "**/vendor/**", "**/third_party/**", "**/third-party/**",
    "**/dist/**", "**/build/**", "**/.next/**", "**/coverage/**",
    "**/*.min.js", "**/*.d.ts", "**/*.d.mts", "**/*.d.cts",
)

# Front-end code renders state; it holds no lease and runs no recovery. A module is UI code when it
# is a JSX file or imports a UI framework (by package name, so an alias of the import changes nothing).
UI_SUFFIXES = (".tsx", ".jsx")
UI_PACKAGES = (
    "react", "react-dom", "preact", "solid-js", "vue", "svelte", "@angular/core", "lit", "@opentui/core",
    "@opentui/solid", "@opentui/react", "ink", "@builder.io/qwik", "next", "@remix-run/react", "@tanstack/react-query",
    "@tanstack/solid-query", "@solidjs/router", "react-router", "react-router-dom",
)


def is_ui(path: str, specifiers: Iterable[str]) -> bool:
    """A JSX file, or a module importing a UI framework (`react`, `solid-js/web`, `@angular/core`, ...)."""
    if path.endswith(UI_SUFFIXES):
        return True
    return any(s == p or s.startswith(p + "/") for s in specifiers for p in UI_PACKAGES)


# GitHub's linguist attributes that say a file is not the repository's own code.
MARKS = ("linguist-generated", "linguist-vendored", "linguist-documentation")


@dataclass(frozen=True)
class _Rule:
    base: str  # the directory of the .gitattributes file ("" for the root)
    pattern: str
    marks: tuple[tuple[str, bool], ...]  # (attribute, set?) in line order


def _parse(base: str, text: str) -> list[_Rule]:
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("[attr]"):
            continue
        pattern, *attrs = line.split()
        marks = []
        for attr in attrs:
            name, _, value = attr.lstrip("-!").partition("=")
            if name in MARKS:
                unset = attr.startswith(("-", "!")) or value.lower() in ("false", "0")
                marks.append((name, not unset))
        if marks:
            rules.append(_Rule(base, pattern, tuple(marks)))
    return rules


def _matches(rule: _Rule, path: str) -> bool:
    prefix = rule.base + "/" if rule.base else ""
    if not path.startswith(prefix):
        return False
    rel = path[len(prefix):]
    if rule.pattern.endswith("/"):
        return False  # git: a directory pattern gives its attributes to no file (they do not recurse)
    pattern = rule.pattern.lstrip("/")
    if "/" in rule.pattern:
        return globs.matches(rel, (pattern,))
    # No slash: the file's own name matches, at any depth below the attributes file.
    return globs.matches(rel, (pattern, "**/" + pattern))


@dataclass
class Production:
    """Production code of one tree; `.gitattributes` files are read once each, as asked."""

    read: Callable[[str], "str | None"]  # path -> text of the base tree, None when absent
    _rules: dict[str, list[_Rule]] = field(default_factory=dict)

    def _rules_of(self, directory: str) -> list[_Rule]:
        if directory not in self._rules:
            name = posixpath.join(directory, ".gitattributes") if directory else ".gitattributes"
            text = self.read(name)
            self._rules[directory] = _parse(directory, text) if text else []
        return self._rules[directory]

    def marked(self, path: str) -> str:
        """The linguist mark `.gitattributes` gives `path` ("" for none)."""
        parts = path.split("/")[:-1]
        directories = [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]
        state: dict[str, bool] = {}
        for directory in directories:  # deeper files override shallower ones, later lines earlier ones
            for rule in self._rules_of(directory):
                if _matches(rule, path):
                    state.update(rule.marks)
        return next((name for name in MARKS if state.get(name)), "")

    def why_not(self, path: str) -> str:
        """Why `path` is not production code ("" when it is)."""
        if globs.matches(path, NOT_PRODUCTION):
            return "a test, fixture, vendored or built file by convention"
        mark = self.marked(path)
        return f"marked `{mark}` in .gitattributes" if mark else ""

    def __call__(self, path: str) -> bool:
        return not self.why_not(path)
