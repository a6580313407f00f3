"""A pull request's identity chains its versions into deltas; permalinks point at its head.

The identity is the number (`--pr N`, or `pull_request.number` of the event
at GITHUB_EVENT_PATH), else the head branch's name; never the refs' text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitrepo import Repo, git
from reviewer.cli import main
from reviewer.inputs.pullrequest import pull_request_patch

GITHUB = ("GITHUB_EVENT_PATH", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_STEP_SUMMARY")


@pytest.fixture(autouse=True)
def _outside_github(monkeypatch) -> None:
    for name in GITHUB:
        monkeypatch.delenv(name, raising=False)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def pushes(tmp_path: Path):
    """A repository with `main` and two versions of one change (commits on no branch):
    (repo, main tip, first push, second push)."""
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"src/a.ts": "export const a = 1\n"}, "base")
    git(repo.path, "checkout", "-q", "--detach")
    first = repo.commit({"src/a.ts": "export const a = 2\n"}, "first push")
    second = repo.commit({"src/a.ts": "export const a = 3\n", "src/b.ts": "export const b = 1\n"}, "second push")
    git(repo.path, "checkout", "-q", "main")
    return repo.path, base, first, second


def _pr(capsys, repo: Path, state: Path, head: str, *extra: str) -> tuple[int, dict, str]:
    code, out, err = _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", head,
                          "--state-dir", str(state), "--format", "json", *extra)
    assert code in (0, 1), err
    return code, json.loads(out), err


def _records(state: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((state / "reviews").glob("*.json"))]


def _record_of(state: Path, head: str) -> dict:
    (record,) = [r for r in _records(state) if (r["identity"]["pull_request"] or {}).get("head") == head]
    return record


def test_two_pushes_given_as_commit_ids_chain_by_pr_number(pushes, capsys, tmp_path) -> None:
    repo, _, first, second = pushes
    state = tmp_path / "state"
    _, report1, err1 = _pr(capsys, repo, state, first, "--pr", "7")
    _, report2, err2 = _pr(capsys, repo, state, second, "--pr", "7")
    assert report1["delta"] is None and err1 == err2 == ""
    assert report2["delta"] is not None
    assert report1["patch"]["sha256"][:12] in report2["delta"]["previous"]
    ident = _record_of(state, second)["identity"]["pull_request"]
    assert ident["number"] == 7 and ident["head_branch"] is None and ident["head"] == second


def test_commit_ids_without_a_number_never_chain_and_say_so(pushes, capsys, tmp_path) -> None:
    repo, _, first, second = pushes
    state = tmp_path / "state"
    _, _, err1 = _pr(capsys, repo, state, first)
    _, report2, err2 = _pr(capsys, repo, state, second)
    assert report2["delta"] is None
    for err in (err1, err2):
        assert err.startswith("reviewer: note: no delta:") and "--pr N" in err and err.count("\n") == 1
    # Another number is another pull request.
    _pr(capsys, repo, state, first, "--pr", "7")
    _, report, _ = _pr(capsys, repo, state, second, "--pr", "8")
    assert report["delta"] is None


def test_head_head_on_two_branches_is_two_pull_requests(pushes, capsys, tmp_path) -> None:
    repo, _, first, second = pushes
    state = tmp_path / "state"
    git(repo, "checkout", "-q", "-b", "one", first)
    _, report, _ = _pr(capsys, repo, state, "HEAD")
    assert report["delta"] is None
    git(repo, "checkout", "-q", "-b", "two", second)
    _, report, err = _pr(capsys, repo, state, "HEAD")
    assert report["delta"] is None and err == ""
    # The same branch pushed again is the same pull request: its versions chain.
    git(repo, "checkout", "-q", "one")
    git(repo, "reset", "-q", "--hard", second)
    _, report, _ = _pr(capsys, repo, state, "HEAD")
    assert report["delta"] is not None
    heads = {r["identity"]["pull_request"]["head_branch"] for r in _records(state)}
    assert heads == {"one", "two"}


def _event(tmp_path: Path, payload: object, name: str = "event.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(payload))
    return path


def test_the_number_is_read_from_github_event_path(pushes, capsys, tmp_path, monkeypatch) -> None:
    repo, _, first, second = pushes
    state = tmp_path / "state"
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(_event(tmp_path, {"action": "synchronize", "pull_request": {"number": 7}})))
    _, report1, err = _pr(capsys, repo, state, first)
    assert report1["delta"] is None and err == ""
    _, report2, _ = _pr(capsys, repo, state, second)
    assert report2["delta"] is not None
    assert _record_of(state, second)["identity"]["pull_request"]["number"] == 7
    # --pr wins over the event: pull request 8 has no earlier version.
    _, report, _ = _pr(capsys, repo, state, second, "--pr", "8", "--fresh")
    assert report["delta"] is None


def test_an_event_without_a_pull_request_has_no_number(pushes, capsys, tmp_path, monkeypatch) -> None:
    repo, _, first, _ = pushes
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(_event(tmp_path, {"ref": "refs/heads/main", "after": first})))
    code, report, err = _pr(capsys, repo, tmp_path / "state", first)
    assert code == 0 and "no delta" in err
    assert _records(tmp_path / "state")[0]["identity"]["pull_request"]["number"] is None


@pytest.mark.parametrize("content, message", [
    ("{not json", "not a JSON event"),
    ("[1, 2]", "a JSON object is expected"),
    ('{"pull_request": {"number": "7"}}', "pull_request.number is not a positive integer"),
    ('{"pull_request": {"number": 0}}', "pull_request.number is not a positive integer"),
    ('{"pull_request": {"number": true}}', "pull_request.number is not a positive integer"),
    ('{"pull_request": []}', "pull_request.number is not a positive integer"),
    (b"\xff\xfe", "not a JSON event"),
    (None, "cannot read (No such file or directory)"),
    ("directory", "not a regular file"),
])
def test_a_broken_event_file_is_exit_2_with_one_clear_line(pushes, capsys, tmp_path, monkeypatch, content, message) -> None:
    repo, _, first, _ = pushes
    path = tmp_path / "event.json"
    if content == "directory":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(path))
    code, out, err = _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", first,
                          "--state-dir", str(tmp_path / "state"))
    assert (code, out) == (2, "")
    assert err.startswith(f"reviewer: GITHUB_EVENT_PATH={path}: ") and message in err and err.count("\n") == 1
    assert "--pr N" in err
    assert not (tmp_path / "state").exists()
    # --pr needs no event: the broken file is never read.
    code, _, err = _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", first, "--pr", "3",
                        "--no-state")
    assert code == 0, err


def test_pr_number_must_be_positive(pushes, capsys) -> None:
    repo, _, first, _ = pushes
    code, out, err = _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", first, "--pr", "0")
    assert (code, out) == (2, "") and "--pr 0" in err and err.count("\n") == 1
    code, _, err = _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", first, "--pr", "seven")
    assert code == 2 and "--pr" in err and "invalid int value" in err


@pytest.mark.parametrize("head, checkout, branch", [
    ("feature", None, "feature"),
    ("refs/heads/feature", None, "feature"),
    ("HEAD", "feature", "feature"),
    ("HEAD", "detached", None),
    ("feature~0", None, None),
    ("sha", None, None),
    ("origin/feature", None, None),
    ("v1", None, None),
])
def test_the_head_branch_is_a_local_branch_or_nothing(pushes, tmp_path, head, checkout, branch) -> None:
    repo, _, first, second = pushes
    git(repo, "branch", "-q", "feature", second)
    git(repo, "tag", "v1", second)
    git(repo, "update-ref", "refs/remotes/origin/feature", second)
    if checkout == "feature":
        git(repo, "checkout", "-q", "feature")
    elif checkout == "detached":
        git(repo, "checkout", "-q", "--detach", "feature")
    pr, patch = pull_request_patch(str(repo), "main", second if head == "sha" else head, tmp_path)
    assert pr.head == second and patch is not None
    assert pr.head_branch == branch and pr.number is None


def _links(state: Path) -> dict | None:
    (record,) = _records(state)
    return record["identity"]["links"]


def test_link_base_gives_permalinks_to_the_head_commit(pushes, capsys, tmp_path) -> None:
    repo, _, first, _ = pushes
    state = tmp_path / "state"
    _pr(capsys, repo, state, first, "--link-base", "https://git.example.test/team/service/")
    assert _links(state) == {"repository": "https://git.example.test/team/service", "commit": first, "run": None}


def test_github_environment_gives_permalinks_and_the_run(pushes, capsys, tmp_path, monkeypatch) -> None:
    repo, _, first, _ = pushes
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/service")
    monkeypatch.setenv("GITHUB_RUN_ID", "12345")
    state = tmp_path / "state"
    _pr(capsys, repo, state, first, "--pr", "1")
    assert _links(state) == {
        "repository": "https://github.com/acme/service", "commit": first,
        "run": "https://github.com/acme/service/actions/runs/12345",
    }
    # --link-base names the repository; the run is still GitHub's.
    other = tmp_path / "other"
    _pr(capsys, repo, other, first, "--pr", "1", "--link-base", "https://mirror.example.test/acme/service")
    assert _links(other) == {
        "repository": "https://mirror.example.test/acme/service", "commit": first,
        "run": "https://github.com/acme/service/actions/runs/12345",
    }


def test_review_of_a_patch_has_no_permalinks(pushes, capsys, tmp_path, monkeypatch) -> None:
    """`review` knows no head commit, only a patch: nothing to link to."""
    repo, base, first, _ = pushes
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/service")
    patch = tmp_path / "p.patch"
    patch.write_text(git(repo, "diff", "--binary", "--full-index", base, first) + "\n")
    state = tmp_path / "state"
    code, _, err = _run(capsys, "review", "--repo", str(repo), "--base", base, "--patch", str(patch),
                        "--state-dir", str(state))
    assert code == 0, err
    assert _links(state) is None


@pytest.mark.parametrize("url, message", [
    ("ftp://example.test/a/b", "not an http or https URL"),
    ("example.test/a/b", "not an http or https URL"),
    ("https:///a/b", "not an http or https URL"),
    ("https://example.test/a/b?tab=1", "no query or fragment"),
    ("https://example.test/a/b#top", "no query or fragment"),
    ("https://user:secret@example.test/a/b", "no user name or password"),
    ("https://example.test/a b", "only letters, digits"),
    ("https://example.test/a)[x](https://evil.test", "only letters, digits"),
    ("https://example.test:port/a", "not a URL"),
])
def test_a_bad_link_base_is_exit_2_with_one_clear_line(pushes, capsys, tmp_path, url, message) -> None:
    repo, _, first, _ = pushes
    code, out, err = _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", first, "--no-state",
                          "--link-base", url)
    assert (code, out) == (2, "")
    assert err.startswith("reviewer: --link-base ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("name, value, message", [
    ("GITHUB_REPOSITORY", "acme", "not an owner/name pair"),
    ("GITHUB_REPOSITORY", "acme/../x", "not an owner/name pair"),
    ("GITHUB_RUN_ID", "12; rm -rf /", "not a run number"),
    ("GITHUB_SERVER_URL", "javascript:alert(1)", "not an http or https URL"),
])
def test_a_bad_github_environment_is_exit_2(pushes, capsys, monkeypatch, name, value, message) -> None:
    repo, _, first, _ = pushes
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/service", "GITHUB_RUN_ID": "1"}
    env[name] = value
    for key, val in env.items():
        monkeypatch.setenv(key, val)
    code, out, err = _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", first, "--no-state")
    assert (code, out) == (2, "") and f"{name} " in err and message in err and err.count("\n") == 1
