"""Unit facts of resume-identity's helpers, on real snippets (line numbers of each snippet start at 1)."""

from __future__ import annotations

import textwrap

import pytest

from reviewer.typescript import Program
from reviewer.rules.resume_identity.words import field_matches, is_empty, says_resume, segments, stems
from reviewer.typescript.queries import operator
from reviewer.rules.resume_identity.corrupt import _empty_result, _names_missing

RESUME = stems(["resume", "recover", "restore", "continue"])


def _program(source: str, path: str = "x.ts") -> Program:
    return Program({path: textwrap.dedent(source).lstrip("\n")}.get)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("latestRecovery", ["latest", "recovery"]),
        ("restore_session", ["restore", "session"]),
        ("resumeTaskByID", ["resume", "task", "by", "id"]),
        ("HTTPResume", ["http", "resume"]),
    ],
)
def test_segments_split_camel_and_snake_case(name: str, expected: list[str]) -> None:
    assert segments(name) == expected


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("latestRecovery", True),  # recover -> recovery
        ("resumed", True),
        ("continuation", True),  # continue -> continu
        ("SessionInput.resumeLatest", True),
        ("presumeValid", False),  # `resume` inside a segment is not a word of the name
        ("restOfList", False),
        ("listRecent", False),
        (None, False),
    ],
)
def test_resume_words_match_name_segments(name: str | None, says: bool) -> None:
    assert says_resume(name, RESUME) is says


def test_field_matches_a_dotted_property_path_on_segment_boundaries() -> None:
    fields = ("time.updated", "updatedAt")
    assert field_matches("b.time.updated", fields) == "time.updated"
    assert field_matches("right.updatedAt", fields) == "updatedAt"
    assert field_matches("b.lastUpdatedAt", fields) is None
    assert field_matches(None, fields) is None


def test_empty_values_and_empty_successes() -> None:
    program = _program(
        """
        const a = []
        const b = Effect.succeed([])
        const c = Effect.succeed(["x"])
        const d = new Map()
        const e = Option.none()
        const f = { items: [] }
        """
    )
    module = program.module("x.ts")
    values = {name: module.constant(name) for name in "abcdef"}
    assert {name for name, value in values.items() if is_empty(value)} == {"a", "b", "d", "e"}


def test_renamed_package_imports_read_as_their_exported_name() -> None:
    program = _program(
        """
        import { desc as newestFirst } from "drizzle-orm"
        db.select().from(T).orderBy(newestFirst(T.time_created))
        """
    )
    call = next(c for c in program.module("x.ts").calls() if c.normalized.startswith("newestFirst("))
    assert operator(program, call) == "desc"


def test_a_handler_that_tests_for_a_missing_file_first_is_not_a_fallback_to_empty() -> None:
    program = _program(
        """
        const a = (e) => (isNotFound(e) ? Effect.succeed([]) : Effect.fail(e))
        const b = (e) => {
          if (e.code === "ENOENT") return []
          return undefined
        }
        const c = () => Effect.succeed([])
        const d = (e) => Effect.fail(new Corrupt(e))
        """
    )
    found = {name: _empty_result(program.function("x.ts", name).expr) for name in "abcd"}
    assert found["a"] is None  # the empty value is on the not-found side of the test
    assert found["b"] is not None and found["b"].normalized == "undefined"  # what every other error gives
    assert found["c"] is not None
    assert found["d"] is None


def test_not_found_tags_are_recognised() -> None:
    assert _names_missing("NotFound")
    assert _names_missing("ENOENT")
    assert not _names_missing("ParseError")
    assert not _names_missing(None)
