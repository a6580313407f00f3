"""`Repo.grep_lines` sends its fixed strings as one escaped alternation (`-E`), for speed: the lines it
returns must be exactly the lines that hold one of the strings, whatever characters the strings are made
of (regex specials, a `|`, a backslash, bytes that are not UTF-8), on a real repository."""

from __future__ import annotations

from gitrepo import Repo

from reviewer.gitio import open_repo

LINES = [
    "const a = x.b",  # `x.b`: a `.` must not match any character
    "const a = xzb",
    "call(f)",  # `(f)`
    "call f",
    "[z] = pair",  # `[z]`
    "z = pair",
    "a|b literal",  # `a|b` is one string, not two alternatives
    "just a here",
    "just b here",
    "^start$ inside",  # anchors as characters
    "start",
    "back\\slash",  # a backslash
    "backslash",
    "p+q*r?",  # quantifiers
    "ppq",
    "{1,2} braces",
    "\u00e9t\u00e9 summer",  # non-ASCII, as UTF-8 bytes
    "nothing to see",
]
LITERALS = ["x.b", "(f)", "[z]", "a|b", "^start$", "back\\slash", "p+q*r?", "{1,2}", "\u00e9t\u00e9"]


def _lines(tmp_path, files: dict[str, bytes | str], literals: list[str]) -> list[tuple[str, str]]:
    repo = Repo(tmp_path / "r")
    commit = repo.commit(files)
    opened = open_repo(str(repo.path))
    try:
        return opened.grep_lines(opened.tree_of(commit), literals, (".ts",))
    finally:
        opened.close()


def test_each_literal_matches_only_lines_holding_it_as_written(tmp_path) -> None:
    found = _lines(tmp_path, {"a.ts": "\n".join(LINES) + "\n", "b.md": "x.b\n"}, LITERALS)
    assert found == [
        ("a.ts", "const a = x.b"),
        ("a.ts", "call(f)"),
        ("a.ts", "[z] = pair"),
        ("a.ts", "a|b literal"),
        ("a.ts", "^start$ inside"),
        ("a.ts", "back\\slash"),
        ("a.ts", "p+q*r?"),
        ("a.ts", "{1,2} braces"),
        ("a.ts", "\u00e9t\u00e9 summer"),
    ]


def test_a_line_that_is_not_utf8_still_matches_by_its_bytes(tmp_path) -> None:
    found = _lines(tmp_path, {"a.ts": b"const \xff\xfe lease = 1\nconst other = 2\n"}, ["lease"])
    assert [path for path, _ in found] == ["a.ts"] and "lease" in found[0][1]


def test_strings_that_cannot_be_one_line_or_are_empty_are_dropped_not_widened(tmp_path) -> None:
    # An empty string would match every line; one with a line break can match none.
    assert _lines(tmp_path, {"a.ts": "one\ntwo\n"}, ["", "one\ntwo"]) == []


def test_many_literals_at_once_answer_as_each_alone(tmp_path) -> None:
    words = [f"lease{i}x" for i in range(300)]
    wanted = [f"const lease{i}x = 1" for i in range(0, 300, 13)]
    text = "".join(f"{line}\nconst lease{i}y = 2\n" for i, line in zip(range(0, 300, 13), wanted))
    found = _lines(tmp_path, {"a.ts": text}, words)
    assert [line for _, line in found] == wanted


def test_records_are_read_whole_when_a_path_holds_a_line_break_and_a_line_holds_a_nul(tmp_path) -> None:
    """git's `-I` judges a file by its first 8,000 bytes, so a text line past them may hold a NUL, and a
    path may hold a line break: each (path, line) must come back as the file holds it."""
    late_nul = "x\n" * 4_100 + "lease\0held here\n" + "lease again\n"
    lines = _lines(tmp_path, {"odd\nname.ts": "lease()\nother\n", "late.ts": late_nul.encode(), "b.ts": "no\n"},
                   ["lease"])
    assert sorted(lines) == sorted([("late.ts", "lease again"), ("late.ts", "lease\0held here"), ("odd\nname.ts", "lease()")])


def test_a_git_that_cannot_be_started_is_a_git_error_not_an_os_error(tmp_path) -> None:
    """A command line past the system's limit: the family that asked fails closed with git's own words."""
    import pytest

    from reviewer.errors import GitError

    repo = Repo(tmp_path / "r")
    commit = repo.commit({"a.ts": "x\n"})
    opened = open_repo(str(repo.path))
    try:
        with pytest.raises(GitError, match="could not be started"):
            opened.run("grep", "-e", "x", opened.tree_of(commit), "--", *["p" * 100_000] * 40)
    finally:
        opened.close()
