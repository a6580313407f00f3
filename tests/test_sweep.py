"""`reviewer sweep` on a history built in the test: the shipped sample's patches as commits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.cli import main
from gitrepo import git, sample_repo


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[str]]:
    """base → v5 (DO-NOT-MERGE) → v6 on top of v5 → a README edit → an empty commit → a merge."""
    tmp = tmp_path_factory.mktemp("sweep")
    git_dir, base, patches = sample_repo(tmp)
    work = tmp / "work"
    git(tmp, "clone", "-q", str(git_dir), str(work))
    git(work, "checkout", "-q", "-B", "main", base)
    git(work, "apply", "--index", str(patches["v5"]))
    git(work, "commit", "-q", "-m", "v5")
    git(work, "apply", "--index", "-R", str(patches["v5"]))
    git(work, "apply", "--index", str(patches["v6"]))
    git(work, "commit", "-q", "-m", "v6")
    (work / "NOTES.md").write_text("notes\n")
    git(work, "add", "NOTES.md")
    git(work, "commit", "-q", "-m", "notes")
    git(work, "commit", "-q", "--allow-empty", "-m", "nothing")
    git(work, "checkout", "-q", "-b", "side", "HEAD~1")
    (work / "SIDE.md").write_text("side\n")
    git(work, "add", "SIDE.md")
    git(work, "commit", "-q", "-m", "side")
    git(work, "checkout", "-q", "main")
    git(work, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    commits = git(work, "rev-list", "--reverse", "--topo-order", f"{base}..main").split()
    return work, [base, *commits]


def _sweep(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["sweep", *args, "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_commit_report_equals_reviewer_review_of_that_commit(history, tmp_path, capsys) -> None:
    work, commits = history
    code, out, _ = _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main",
                          "--out", str(tmp_path / "s.jsonl"), "--reports", str(tmp_path / "reports"))
    lines = _lines(tmp_path / "s.jsonl")
    assert [l["commit"] for l in lines] == commits[1:]
    by_status = {l["status"] for l in lines}
    assert by_status == {"reviewed", "empty"}
    assert code == 1 and "DO-NOT-MERGE" in out  # v5 blocks
    assert lines[0]["verdict"] == "DO-NOT-MERGE" and lines[0]["counts"]["must-fix"] > 0
    for line in lines:
        if line["status"] != "reviewed":
            continue
        patch = tmp_path / f"{line['commit'][:12]}.patch"
        patch.write_bytes(
            __import__("subprocess").run(["git", "diff", "--binary", "--full-index", "-M", line["parent"], line["commit"]],
                                         cwd=work, capture_output=True, check=True).stdout)
        for fmt, ext in (("json", "json"), ("markdown", "md")):
            single = tmp_path / f"single.{ext}"
            rc = main(["review", "--repo", str(work), "--base", line["parent"], "--patch", str(patch),
                       "--no-state", "--format", f"{fmt}={single}"])
            assert rc == (1 if line["verdict"] == "DO-NOT-MERGE" else 0)
            assert (tmp_path / "reports" / f"{line['commit']}.{ext}").read_bytes() == single.read_bytes()


def test_an_interrupted_sweep_resumes_to_the_same_file(history, tmp_path, capsys) -> None:
    work, commits = history
    whole = tmp_path / "whole.jsonl"
    _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--out", str(whole))
    data = whole.read_bytes()
    first, second = data.split(b"\n")[:2]
    cut = tmp_path / "cut.jsonl"
    # Killed while writing the second line: one whole line and half of the next.
    cut.write_bytes(first + b"\n" + second[: len(second) // 2])
    code, _, err = _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--out", str(cut))
    assert cut.read_bytes() == data
    assert code == 1


def test_resume_refuses_a_file_written_with_other_settings(history, tmp_path, capsys) -> None:
    work, commits = history
    out = tmp_path / "s.jsonl"
    _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..{commits[2]}", "--out", str(out))
    code, _, err = _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--out", str(out),
                          "--scope", "file")
    assert code == 2 and "other settings" in err
    code, _, _ = _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--out", str(out),
                        "--scope", "file", "--restart")
    assert code == 1 and len(_lines(out)) == len(commits) - 1


def test_shards_partition_the_range_and_their_union_is_the_whole(history, tmp_path, capsys) -> None:
    work, commits = history
    whole = tmp_path / "whole.jsonl"
    _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--out", str(whole))
    parts = []
    for i in (1, 2, 3):
        out = tmp_path / f"part{i}.jsonl"
        _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--shard", f"{i}/3", "--out", str(out))
        parts.append(_lines(out))
    ids = [l["commit"] for part in parts for l in part]
    assert sorted(ids) == sorted(commits[1:]) and len(ids) == len(set(ids))
    by_commit = {l["commit"]: l for l in _lines(whole)}
    assert all(l == by_commit[l["commit"]] for part in parts for l in part)


def test_jobs_give_the_same_lines_in_the_same_order(history, tmp_path, capsys) -> None:
    work, commits = history
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--out", str(one))
    code, out, _ = _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--out", str(two), "--jobs", "2")
    assert one.read_bytes() == two.read_bytes()
    assert code == 1


def test_summary_counts_commits_verdicts_and_families(history, capsys) -> None:
    work, commits = history
    code, out, _ = _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main")
    assert f"{len(commits) - 1} commits" in out
    assert "1 empty" in out and "DO-NOT-MERGE" in out
    assert "lease-renewal" in out and "must-fix" in out and "slowest:" in out


def test_first_parent_and_commit_lists(history, tmp_path, capsys) -> None:
    work, commits = history
    out = tmp_path / "fp.jsonl"
    _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--first-parent", "--out", str(out))
    side = git(work, "rev-parse", "side")
    listed = [l["commit"] for l in _lines(out)]
    assert side not in listed and git(work, "rev-parse", "main") in listed
    merge = next(l for l in _lines(out) if l["commit"] == git(work, "rev-parse", "main"))
    assert merge["parent"] == git(work, "rev-parse", "main^1")  # a merge is reviewed against its first parent
    listing = tmp_path / "commits.txt"
    listing.write_text(f"# two of them\n{commits[2]}\nmain~1  # the empty one\n")
    code, _, _ = _sweep(capsys, "--repo", str(work), "--commits", str(listing), "--out", str(tmp_path / "c.jsonl"))
    assert [l["commit"] for l in _lines(tmp_path / "c.jsonl")] == [commits[2], git(work, "rev-parse", "main~1")]


@pytest.mark.parametrize("args, message", [
    (["--range", "main"], "write it as A..B"),
    (["--range=--all"], "not a revision range"),
    (["--range", "nope..main"], "--range"),
    (["--range", "main..main", "--shard", "0/3"], "between 1 and N"),
    (["--range", "main..main", "--shard", "x"], "I/N"),
    (["--range", "main..main", "--jobs", "0"], "--jobs"),
    (["--range", "main..main", "--restart"], "--restart needs --out"),
])
def test_bad_arguments_are_refused_with_a_clear_message(history, capsys, args, message) -> None:
    work, _ = history
    code, _, err = _sweep(capsys, "--repo", str(work), *args)
    assert code == 2 and message in err, err


def test_sweep_never_changes_the_repository(history, tmp_path, capsys) -> None:
    from gitrepo import state_digest

    work, commits = history
    before = state_digest(work)
    _sweep(capsys, "--repo", str(work), "--range", f"{commits[0]}..main", "--jobs", "2")
    assert state_digest(work) == before


def test_grep_reuse_between_trees_answers_exactly_what_git_grep_answers(tmp_path) -> None:
    """A sweep greps only blobs it has not seen; the lines must be git's own, for names a pathspec could misread."""
    from reviewer.engine.context import TreeView
    from reviewer.engine.shared import Shared
    from reviewer.gitio import open_repo
    from gitrepo import Repo

    repo = Repo(tmp_path / "r")
    first = repo.commit({"a.ts": "const claim = 1\n", "b*.ts": "claim()\n", ":(glob)c.ts": "x\nclaim\n",
                         "d.md": "claim\n", "e.ts": "nothing\n"})
    second = repo.commit({"a.ts": "const claim = 2\nclaim\n", "f.ts": "claim f\n", "e.ts": None,
                          "b*.ts": "claim(2)\n", ":(glob)c.ts": "claim\n"})
    opened = open_repo(str(repo.path))
    try:
        shared = Shared()
        for commit in (first, second, first):
            tree = opened.tree_of(commit)
            reused = TreeView(opened, tree, shared=shared)._grep_lines(["claim"])
            fresh = TreeView(opened, tree)._grep_lines(["claim"])
            assert sorted(reused) == sorted(fresh) and fresh
            for patterns, every in ((["claim\\(", "[0-9]"], True), (["claim\\(", "const"], False)):
                matched = TreeView(opened, tree, shared=shared).files_matching(patterns, every)
                assert matched == TreeView(opened, tree).files_matching(patterns, every)
        assert ("b*.ts", "claim()") in fresh and (":(glob)c.ts", "claim") in fresh
        second_lines = TreeView(opened, opened.tree_of(second), shared=Shared())._grep_lines(["claim"])
        assert ("b*.ts", "claim(2)") in second_lines
    finally:
        opened.close()


def test_a_commit_whose_objects_are_missing_is_refused_and_the_sweep_goes_on(tmp_path, capsys) -> None:
    from gitrepo import Repo

    repo = Repo(tmp_path / "r")
    first = repo.commit({"a.ts": "export const a = 1\n"})
    repo.commit({"a.ts": "export const a = 2\n"})
    repo.commit({"a.ts": "export const a = 3\n"})
    last = repo.commit({"b.ts": "export const b = 1\n"})
    lost = git(repo.path, "rev-parse", "HEAD~2:a.ts")
    (repo.path / ".git" / "objects" / lost[:2] / lost[2:]).unlink()
    out = tmp_path / "s.jsonl"
    code, summary, _ = _sweep(capsys, "--repo", str(repo.path), "--range", f"{first}..main", "--out", str(out))
    lines = _lines(out)
    assert [l["status"] for l in lines] == ["refused", "refused", "reviewed"]
    # Reviewed against its parent, whose tree no longer holds the lost blob.
    assert "cannot diff" in lines[0]["reason"] and lines[2]["commit"] == last
    assert code == 1 and "2 refused" in summary


def test_a_patched_tree_answers_which_words_occur_from_its_base_and_the_files_that_differ(tmp_path) -> None:
    """`TreeView.follows`: the patched tree's word questions are answered from the base's answers and a
    grep of the differing files alone, and every answer is the one a whole-tree grep of it gives."""
    from reviewer.engine.context import TreeView
    from reviewer.gitio import open_repo
    from gitrepo import Repo

    repo = Repo(tmp_path / "r")
    base = repo.commit({
        "a.ts": "alpha()\n",             # changed by the patch
        "b.ts": "// beta in a comment only\nconst s = 'beta'\n",
        "c.ts": "gamma()\n",             # deleted by the patch: its word goes with it
        "e.ts": "alpha(1)\nepsilon()\n",  # untouched
        "n.md": "delta()\n",             # not TypeScript
    })
    patched = repo.commit({"a.ts": "const x = 1\n", "c.ts": None, "d.ts": "beta()\n", "n.md": "delta(2)\n"})
    words = ["alpha", "beta", "delta", "epsilon", "gamma", "zeta"]
    opened = open_repo(str(repo.path))
    greps: list[object] = []
    real = opened.grep_lines

    def spy(tree, literals, suffixes, paths=None):  # records, then runs the real git grep
        greps.append(None if paths is None else tuple(paths))
        return real(tree, literals, suffixes, paths)

    try:
        base_view = TreeView(opened, opened.tree_of(base))
        assert base_view.words_present(words) == {"alpha", "epsilon", "gamma"}
        opened.grep_lines = spy  # type: ignore[method-assign]
        derived = TreeView(opened, opened.tree_of(patched))
        derived.follows(base_view)
        answer = derived.words_present(words)
        opened.grep_lines = real  # type: ignore[method-assign]
        fresh = TreeView(opened, opened.tree_of(patched)).words_present(words)
        assert answer == fresh == {"alpha", "beta", "epsilon"}
        # beta, delta and zeta: absent from the base, so only the differing TypeScript files were read
        # for them; alpha (held by a changed file) and gamma (by a deleted one) needed the whole tree.
        assert ("a.ts", "d.ts") in greps and None in greps
        # Once the base knows where a word is, a patch that leaves that file alone costs no grep.
        greps.clear()
        opened.grep_lines = spy  # type: ignore[method-assign]
        again = TreeView(opened, opened.tree_of(patched))
        again.follows(base_view)
        assert again.words_present(["epsilon"]) == {"epsilon"} and greps == []
    finally:
        opened.grep_lines = real  # type: ignore[method-assign]
        opened.close()


def test_lines_held_for_a_superset_of_literals_answer_as_a_fresh_grep_would(tmp_path) -> None:
    """`TreeView.hold`: one grep for the words and every hint, then each question judged from the kept
    lines, with the answers of a tree that greps for each question alone."""
    from reviewer.engine.context import TreeView
    from reviewer.gitio import open_repo
    from gitrepo import Repo

    repo = Repo(tmp_path / "r")
    commit = repo.commit({
        "a.ts": "const lease = claim.renew(db)\n// release in a comment\n",
        "b.ts": "export function release(lease: Lease) {\n  return lease\n}\n",
        "c.ts": "const s = 'renew release'\nheartbeat()\n",
        "d.md": "release()\n",
    })
    hints = [(r"\brenew\s*\(", ("renew",)), (r"\bfunction\s+release\b", ("release",)), (r"beat\(\)$", ("beat",))]
    words = ["release", "renew", "heartbeat", "Lease", "absent"]
    opened = open_repo(str(repo.path))
    try:
        tree = opened.tree_of(commit)
        held = TreeView(opened, tree)
        held.hold({*words, "renew", "release", "beat", "unused"})
        real, calls = opened.grep_lines, []
        opened.grep_lines = lambda *a, **k: calls.append(a) or real(*a, **k)  # type: ignore[method-assign]
        assert held.words_present(words) == {"release", "renew", "heartbeat", "Lease"}
        held.prescan([], hints)
        assert calls == []  # judged from the held lines
        opened.grep_lines = real  # type: ignore[method-assign]
        fresh = TreeView(opened, tree)
        assert held.words_present(words) == fresh.words_present(words)
        for pattern, literals in hints:
            alone = TreeView(opened, tree)
            alone.prescan([], [(pattern, literals)])
            assert held.files_matching([pattern]) == alone.files_matching([pattern])
        assert held.files_matching([hints[0][0]]) == ("a.ts",)
        assert held.files_matching([hints[1][0]]) == ("b.ts",) and held.files_matching([hints[2][0]]) == ("c.ts",)
        held.release()
        held.prescan(["zeta"], [])  # nothing held any more: it greps
        assert held.words_present(["zeta"]) == set()
    finally:
        opened.close()


def test_a_symbolic_link_holding_a_files_bytes_never_lends_it_its_answer(tmp_path) -> None:
    """git grep reads regular files only; a link whose target text is a file's very bytes has the same
    blob id, so a sweep's memo by blob must not answer the file for the link or the link for the file."""
    import os

    from reviewer.engine.context import TreeView
    from reviewer.engine.shared import Shared
    from reviewer.gitio import open_repo
    from gitrepo import Repo

    content = "export const LEASE_MS = 1"  # no line break: the bytes a link to that name stores
    repo = Repo(tmp_path / "r")
    os.symlink(content, repo.path / "a.ts")
    first = repo.commit({"other.ts": "x\n"})
    second = repo.commit({"b.ts": content})
    opened = open_repo(str(repo.path))
    try:
        assert opened.ls_tree(opened.tree_of(second))["a.ts"][0] == "120000"
        shared = Shared()
        for commit in (first, second):
            tree = opened.tree_of(commit)
            fresh = TreeView(opened, tree)
            swept = TreeView(opened, tree, shared=shared)
            assert swept.files_matching(["LEASE_MS"]) == fresh.files_matching(["LEASE_MS"])
            assert swept.words_present(["LEASE_MS"]) == fresh.words_present(["LEASE_MS"])
        assert fresh.files_matching(["LEASE_MS"]) == ("b.ts",) and fresh.words_present(["LEASE_MS"]) == {"LEASE_MS"}
    finally:
        opened.close()


def test_differing_files_too_long_to_name_on_a_command_line_are_grepped_with_the_whole_tree(tmp_path) -> None:
    """A tree may hold names longer than any file system allows (400 of 6,000 bytes: more than a command
    line takes): the patched tree then greps the whole tree, and answers as a fresh one does."""
    import subprocess

    from reviewer.engine.context import TreeView
    from reviewer.gitio import open_repo
    from gitrepo import Repo, git

    repo = Repo(tmp_path / "r")
    base = repo.commit({"keep.ts": "const WORDX = 1\n"})
    stream = ["commit refs/heads/main", "committer A <a@b.invalid> 0 +0000", "data 1", "x", f"from {base}"]
    stream += [f"M 100644 inline d/{'x' * 6000}{i}.ts\ndata 6\nWORDY\n" for i in range(400)]
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo.path, input=("\n".join(stream) + "\n").encode(), check=True)
    patched = git(repo.path, "rev-parse", "main")
    opened = open_repo(str(repo.path))
    try:
        base_view = TreeView(opened, opened.tree_of(base))
        assert base_view.words_present(["WORDX", "WORDY"]) == {"WORDX"}
        derived = TreeView(opened, opened.tree_of(patched))
        derived.follows(base_view)
        assert derived.words_present(["WORDX", "WORDY"]) == {"WORDX", "WORDY"}
    finally:
        opened.close()
