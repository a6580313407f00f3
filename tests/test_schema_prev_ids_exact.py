"""schema-prev-ids compares snapshot ids exactly as drizzle-kit writes them (issue 24 item 5).

drizzle-kit writes an id with `crypto.randomUUID()` (lowercase hex, 8-4-4-4-12)
and copies the parent's id into `prevIds` verbatim, so ids are compared byte
for byte: no case folding, no stripping. A single-file snapshot's prevIds must
be exactly the base version's id; nothing else is exempt:

* an id in another case, or with whitespace around it, is malformed: must-fix,
  shown quoted so the difference is visible, with the id that was expected;
* the root id on a snapshot whose base version had a parent resets the chain;
* an id an earlier version of the file had (read from the base's git history)
  means the patch was generated against an older schema: a fork, must-fix,
  naming the commit that held it;
* an id no version ever had (at most named as a parent: a squashed branch's
  intermediate) names no snapshot: must-fix.

The one-commit cases live as rule fixtures (tests/fixtures/rules/schema-prev-ids/,
e.g. prev-id-uppercase, prev-id-leading-space, single-first-snapshot); the cases
here need a base with real history, built as git repositories in tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitrepo import Repo, git
from reviewer import review
from reviewer.report import markdown
from reviewer.rules.schema_prev_ids.snapshots import is_uuid, loose_match, quoted
from test_rule_fixtures import FIXTURES, case_trees

SCHEMA = "packages/core/schema.json"
ROOT = "00000000-0000-0000-0000-000000000000"
A = "1a2b3c4d-0001-4000-8000-00000000000a"
B = "1a2b3c4d-0002-4000-8000-00000000000b"  # shares its first 8 characters with A and C
C = "4c7e1b90-2a35-4d68-9f01-b2e3c4d5a6f7"  # the base id
NEW = "d5e6f7a8-b9c0-4d1e-8f2a-3b4c5d6e7f80"
SIDE = "5eed5eed-7777-4aaa-8bbb-cccccccccccc"
SQUASHED = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
CASE = FIXTURES / "schema-prev-ids" / "single-unknown-parent"


def _schema(tree: dict[str, bytes], ident: str, prev: list[str]) -> bytes:
    """The case's schema.json with `id` and `prevIds` replaced (its ddl kept)."""
    data = json.loads(tree[SCHEMA])
    data["id"], data["prevIds"] = ident, prev
    return (json.dumps(data, indent=2) + "\n").encode()


def _review(tmp_path: Path, history: list[tuple[str, list[str]]], ident: str, prev: list[str],
            *, side: tuple[str, list[str]] | None = None, shallow: bool = False, overrides: dict | None = None):
    """Commit the base package once per (id, prevIds) of `history` (oldest first), optionally a
    side branch merged before the last one, then review a patch whose schema.json has `ident`/`prev`.
    Returns (schema-prev-ids invariant, report, {id: commit that wrote it})."""
    base_tree, patched_tree = case_trees(CASE)
    repo = Repo(tmp_path / "repo")
    commits: dict[str, str] = {}
    for index, (hid, hprev) in enumerate(history):
        if side is not None and index == len(history) - 1:
            git(repo.path, "checkout", "-q", "-b", "side")
            commits[side[0]] = repo.commit({SCHEMA: _schema(base_tree, *side)}, f"side {side[0]}")
            git(repo.path, "checkout", "-q", "main")
            repo.commit({"NOTES.md": "main moved on\n"}, "main")
            git(repo.path, "merge", "-q", "--no-ff", "-s", "ours", "-m", "merge side", "side")
        files = {**base_tree, SCHEMA: _schema(base_tree, hid, hprev)} if index == 0 else {SCHEMA: _schema(base_tree, hid, hprev)}
        commits[hid] = repo.commit(files, f"snapshot {hid}")
    base = commits[history[-1][0]]
    git(repo.path, "checkout", "-q", "-b", "candidate")
    head = repo.commit({**patched_tree, SCHEMA: _schema(patched_tree, ident, prev)}, "candidate")
    patch = tmp_path / "change.patch"
    patch.write_bytes(repo.diff(base, head))
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "branch", "-q", "-D", "candidate")
    target = repo.path
    if shallow:
        target = tmp_path / "shallow"
        git(tmp_path, "clone", "-q", "--depth", "1", "--no-local", f"file://{repo.path}", str(target))
    outcome = review.run(review.Request(repo=str(target), base=base, patch=str(patch), overrides=overrides or {}))
    invariant = next(i for i in outcome.report.invariants if i.id == "schema-prev-ids")
    return invariant, outcome.report, commits


def _mismatches(invariant):
    return [f for f in invariant.findings if f.rule == "schema-prev-ids/prev-id-mismatch"]


HISTORY = [(A, [ROOT]), (B, [A]), (C, [B])]


# ------------------------------------------------------------------ exact ids pass


def test_the_exact_base_id_passes_with_history(tmp_path: Path) -> None:
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [C])
    assert invariant.status.value == "verified", invariant.summary
    assert not invariant.findings
    assert f"prevIds = [{C[:8]}…] = base id" in invariant.summary


# ------------------------------------------------------------------ loose spellings of the base id


@pytest.mark.parametrize(
    ("prev", "how"),
    [
        (C.upper(), "in upper case"),
        (" " + C, "with a leading space"),
        (C + " ", "with a trailing space"),
        ("\t" + C + "\u200b", 'with leading "\\t" and trailing "\\u200b"'),
        (C[:9].upper() + C[9:], "in another case"),
    ],
    ids=["upper", "leading-space", "trailing-space", "tab-and-zero-width", "mixed-case"],
)
def test_a_loose_spelling_of_the_base_id_is_a_must_fix_shown_quoted(tmp_path: Path, prev: str, how: str) -> None:
    invariant, report, _ = _review(tmp_path, HISTORY, NEW, [prev])
    [finding] = _mismatches(invariant)
    assert finding.severity.value == "must-fix"
    assert invariant.status.value == "violated"
    shown = json.dumps(prev)  # JSON-quoted, ASCII only: the space, tab or case difference is visible
    assert f"`{shown}`" in finding.message and shown in finding.title
    assert f"it is the base id `{C}` {how}" in finding.message
    assert f"its parent must be [`{C}`] (the base snapshot's id)" in finding.message
    assert "byte for byte" in finding.message
    # The Markdown report keeps the quotes (so the padding) inside a code span.
    assert f"`{shown}`" in markdown.render(report)


def test_a_loose_root_id_is_malformed_too(tmp_path: Path) -> None:
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [ROOT + " "])
    [finding] = _mismatches(invariant)
    assert f"it is the root id `{ROOT}` with a trailing space" in finding.message


# ------------------------------------------------------------------ the root id


def test_a_reset_to_the_root_id_on_a_snapshot_whose_base_had_a_parent_is_a_must_fix(tmp_path: Path) -> None:
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [ROOT])
    [finding] = _mismatches(invariant)
    assert finding.severity.value == "must-fix"
    assert f"resets the chain to the root id, but the base snapshot `{C}` has a parent [`{B}`]" in finding.message


def test_the_root_id_again_on_a_base_that_was_the_first_snapshot_is_a_must_fix(tmp_path: Path) -> None:
    invariant, _, _ = _review(tmp_path, [(C, [ROOT])], NEW, [ROOT])
    [finding] = _mismatches(invariant)
    assert f"the base snapshot `{C}` is already the chain's first snapshot" in finding.message


# ------------------------------------------------------------------ ids from the base's history


def test_an_id_an_earlier_version_had_is_a_stale_parent_naming_its_commit(tmp_path: Path) -> None:
    """Decided (issue 24 item 5): an id the base's history proves was an earlier snapshot is not
    a legitimate parent. The base moved on from it, so the patch forks the chain; the message
    says which commit held it, so the author knows what to rebase past."""
    invariant, _, commits = _review(tmp_path, HISTORY, NEW, [A])
    [finding] = _mismatches(invariant)
    assert finding.severity.value == "must-fix"
    assert f"`{A}` is the id `{SCHEMA}` had at commit `{commits[A][:12]}`, before the base" in finding.message
    assert any("the chain forks" in step for step in finding.failure_sequence)


def test_the_base_snapshots_own_parent_is_still_reported_as_a_fork(tmp_path: Path) -> None:
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [B])
    [finding] = _mismatches(invariant)
    assert f"names the base snapshot's own parent [`{B}`]" in finding.message


def test_an_id_from_a_merged_side_branch_is_found_in_history_and_reported(tmp_path: Path) -> None:
    """The side branch's snapshot is an ancestor of the base (merged, its schema.json discarded)."""
    invariant, _, commits = _review(tmp_path, HISTORY, NEW, [SIDE], side=(SIDE, [B]))
    [finding] = _mismatches(invariant)
    assert f"`{SIDE}` is the id `{SCHEMA}` had at commit `{commits[SIDE][:12]}`" in finding.message


def test_a_squashed_intermediate_only_named_as_a_parent_is_a_must_fix(tmp_path: Path) -> None:
    """History where the squash commit's snapshot names an intermediate no commit ever held:
    the intermediate proves nothing, so a later patch naming it is a must-fix, never a note."""
    history = [(A, [ROOT]), (B, [SQUASHED]), (C, [B])]
    invariant, _, commits = _review(tmp_path, history, NEW, [SQUASHED])
    [finding] = _mismatches(invariant)
    assert finding.severity.value == "must-fix"
    assert "no snapshot of the base tree or of its history has the id" in finding.message
    assert f"only as the parent that the version of `{SCHEMA}` at commit `{commits[B][:12]}` names" in finding.message


def test_an_unknown_well_formed_id_is_a_must_fix(tmp_path: Path) -> None:
    unknown = "7f7f7f7f-1111-4222-8333-444444444444"
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [unknown])
    [finding] = _mismatches(invariant)
    assert finding.severity.value == "must-fix"
    assert "no snapshot of the base tree or of its history has that id." in finding.message
    assert "shallow" not in finding.message


def test_an_id_sharing_the_base_ids_first_characters_is_told_apart(tmp_path: Path) -> None:
    lookalike = C[:8] + "-0000-4000-8000-000000000000"
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [lookalike])
    [finding] = _mismatches(invariant)
    assert f"shares its first 8 characters with `{C}`" in finding.message
    assert lookalike in finding.title and C in finding.title  # whole ids: the short forms are equal


def test_an_upper_case_spelling_of_an_earlier_id_is_malformed_not_looked_up(tmp_path: Path) -> None:
    """git's pickaxe is byte-exact too, and only well-formed ids are ever searched."""
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [A.upper()])
    [finding] = _mismatches(invariant)
    assert f"`{json.dumps(A.upper())}` is not an id as drizzle-kit writes it" in finding.message
    assert "had at commit" not in finding.message


def test_a_shallow_clone_says_the_history_was_not_read_whole(tmp_path: Path) -> None:
    unknown = "7f7f7f7f-1111-4222-8333-444444444444"
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [unknown], shallow=True)
    [finding] = _mismatches(invariant)
    assert finding.severity.value == "must-fix"
    assert "the clone is shallow" in finding.message


def test_an_earlier_id_outside_a_shallow_clone_is_still_a_must_fix(tmp_path: Path) -> None:
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [A], shallow=True)
    [finding] = _mismatches(invariant)
    assert finding.severity.value == "must-fix"
    assert "the clone is shallow" in finding.message


# ------------------------------------------------------------------ --expect-prev-id


def test_an_explicit_expected_parent_is_held_to_exactly(tmp_path: Path) -> None:
    invariant, _, _ = _review(tmp_path, HISTORY, NEW, [B], overrides={"expect_prev_id": B})
    assert not _mismatches(invariant), invariant.summary
    invariant, _, _ = _review(tmp_path / "upper", HISTORY, NEW, [B.upper()], overrides={"expect_prev_id": B})
    [finding] = _mismatches(invariant)
    assert f"it is the expected parent `{B}` in upper case" in finding.message
    assert f"its parent must be [`{B}`] (--expect-prev-id)" in finding.message
    assert finding.title == f"schema.json prevIds names {json.dumps(B.upper())}, not the expected parent {B[:8]}…"


# ------------------------------------------------------------------ the new id


@pytest.mark.parametrize("ident", [NEW.upper(), " " + NEW, NEW + "\n"], ids=["upper", "leading-space", "newline"])
def test_a_loose_new_id_is_not_fresh(tmp_path: Path, ident: str) -> None:
    invariant, _, _ = _review(tmp_path, HISTORY, ident, [C])
    [finding] = [f for f in invariant.findings if f.rule == "schema-prev-ids/id-not-fresh"]
    assert f"`{json.dumps(ident)}`" in finding.message
    assert "not a UUID as drizzle-kit writes it (lowercase hex, 8-4-4-4-12)" in finding.message
    assert not _mismatches(invariant)


def test_the_base_id_in_upper_case_as_the_new_id_is_called_an_edit_in_place(tmp_path: Path) -> None:
    invariant, _, _ = _review(tmp_path, HISTORY, C.upper(), [C])
    [finding] = [f for f in invariant.findings if f.rule == "schema-prev-ids/id-not-fresh"]
    assert f"it is the base snapshot's id `{C}` in upper case" in finding.message


# ------------------------------------------------------------------ the comparison itself


def test_ids_are_recognised_only_as_drizzle_kit_writes_them() -> None:
    assert is_uuid(C) and is_uuid(ROOT)
    for loose in (C.upper(), " " + C, C + " ", C + "\n", C[:-1], C.replace("-", ""), "{" + C + "}"):
        assert not is_uuid(loose), loose


def test_loose_match_says_how_an_id_differs_and_nothing_for_other_ids() -> None:
    assert loose_match(C, C) == ""
    assert loose_match(A, C) == ""
    assert loose_match(C.upper(), C) == "in upper case"
    assert loose_match("  " + C, C) == "with 2 leading spaces"
    assert loose_match(" " + C.upper() + " ", C) == "in upper case with a leading space and a trailing space"
    assert quoted(" " + C + "\u00a0") == json.dumps(" " + C + "\u00a0")
    assert "\\u00a0" in quoted(C + "\u00a0")


def test_a_malformed_parent_is_reported_even_when_the_base_version_is_unreadable(tmp_path: Path) -> None:
    from gitrepo import make_change

    base_tree, patched_tree = case_trees(CASE)
    base_tree = {**base_tree, SCHEMA: b'{"id": "4c7e1b90", '}  # not JSON: the expected parent is unknown
    repo, base, patch, _ = make_change(tmp_path, base_tree, {**patched_tree, SCHEMA: _schema(patched_tree, NEW, [" " + C])})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch))).report
    invariant = next(i for i in report.invariants if i.id == "schema-prev-ids")
    [finding] = _mismatches(invariant)
    assert f"`{json.dumps(' ' + C)}` is not an id as drizzle-kit writes it" in finding.message
    assert "the base version cannot be read" in finding.message
