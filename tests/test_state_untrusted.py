"""A state directory someone else wrote (a CI cache a pull request can save to) is never evidence.

The attack (issue 24, item 2): a workflow added by the pull request saves
review state under the Action's cache key; a re-run of the DO-NOT-MERGE job
restores it and replays MERGE. With `--state-untrusted` (what the Action
passes) a stored verdict is never replayed, and a stored previous version
is only a pointer to commits, whose findings this run computes again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gitrepo import commit_versions, git, sample_repo
from reviewer.cli import main
from reviewer.state.store import Identity

SEED_RULES = {"lease-renewal", "terminal-commit-order", "schema-prev-ids", "bounded-scan"}


@pytest.fixture
def pr_versions(tmp_path: Path):
    """A clone of the sample with one commit per version (v5 violating, v6 fixed) and a `feature` branch."""
    git_dir, _, patches = sample_repo(tmp_path)
    work = tmp_path / "work"
    commits = commit_versions(git_dir, patches, work)
    git(work, "checkout", "-q", "--detach", "origin/main")
    return work, commits


def _pr(capsys, work: Path, head: str, state: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["pr", "--repo", str(work), "--base", "origin/main", "--head", head, "--pr", "7",
                 "--state-dir", str(state), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _only_record(state: Path) -> Path:
    records = sorted((state / "reviews").glob("*.json"))
    assert len(records) == 1
    return records[0]


def _forge_merge(record: Path, merge_outputs: dict[str, str]) -> None:
    """What a hostile workflow saves: the DO-NOT-MERGE record, its identity kept, turned into MERGE."""
    data = json.loads(record.read_text())
    data["verdict"] = "MERGE"
    data["outputs"] = merge_outputs
    data["report"]["verdict"] = "MERGE"
    record.write_text(json.dumps(data))


def _rekey(state: Path, record: Path, data: dict, **entry: str) -> None:
    """What a careful forger does: store the edited record under the key of its new identity and
    point the pull request's chain at it (with `entry`'s other fields, e.g. the patch hash)."""
    key = Identity(data["identity"]).key
    data["key"] = key
    (state / "reviews" / f"{key}.json").write_text(json.dumps(data))
    record.unlink()
    (chain,) = (state / "prs").glob("*.json")
    chained = json.loads(chain.read_text())
    chained["chain"][0].update(review=key, **entry)
    chain.write_text(json.dumps(chained))


def test_a_forged_stored_verdict_is_replayed_only_by_trusting_runs(pr_versions, capsys, tmp_path) -> None:
    work, commits = pr_versions
    merge_state = tmp_path / "merge-state"
    assert _pr(capsys, work, commits["v6"], merge_state, "--format", "markdown")[0] == 0
    merge_outputs = json.loads(_only_record(merge_state).read_text())["outputs"]

    state = tmp_path / "state"
    code, first, _ = _pr(capsys, work, commits["v5"], state, "--format", "markdown")
    assert code == 1 and first.rstrip().endswith("DO-NOT-MERGE")
    _forge_merge(_only_record(state), merge_outputs)

    # Control: the attack is real for a run that trusts its state directory.
    code, replayed, err = _pr(capsys, work, commits["v5"], state, "--format", "markdown")
    assert code == 0 and "re-run" in err and replayed.rstrip().endswith("MERGE")

    code, again, err = _pr(capsys, work, commits["v5"], state, "--format", "markdown", "--state-untrusted")
    assert code == 1 and "re-run" not in err
    assert again == first  # reviewed again: the same report as the first review, byte for byte
    # And the forged record was replaced by this run's own review.
    assert json.loads(_only_record(state).read_text())["verdict"] == "DO-NOT-MERGE"


def test_a_forged_previous_record_cannot_claim_findings_resolved(pr_versions, capsys, tmp_path) -> None:
    work, commits = pr_versions
    state = tmp_path / "state"
    assert _pr(capsys, work, commits["v5"], state, "--format", "json")[0] == 1
    v5 = _only_record(state)
    data = json.loads(v5.read_text())
    real_ids = {f["id"] for f in data["report"]["findings"]}
    forged = dict(data["report"]["findings"][0], id="f" * 16, title="Forged finding the PR never fixed")
    data["report"]["findings"].append(forged)
    v5.write_text(json.dumps(data))
    trusting_state = tmp_path / "trusting"
    shutil.copytree(state, trusting_state)

    code, out, err = _pr(capsys, work, commits["v6"], state, "--format", "json", "--state-untrusted")
    assert code == 0, err
    delta = json.loads(out)["delta"]
    resolved = {item["id"] for item in delta["resolved"]}
    assert "f" * 16 not in resolved and "Forged" not in out
    assert resolved == real_ids  # every real v5 finding, recomputed by this run, is resolved in v6
    assert {item["rule"].split("/")[0] for item in delta["resolved"]} >= SEED_RULES

    # Control: a run that trusts the directory repeats the forged claim.
    code, trusting, _ = _pr(capsys, work, commits["v6"], trusting_state, "--format", "json")
    assert "f" * 16 in {item["id"] for item in json.loads(trusting)["delta"]["resolved"]}


def test_a_previous_record_pointing_at_missing_commits_gives_no_delta_and_says_so(pr_versions, capsys, tmp_path) -> None:
    work, commits = pr_versions
    state = tmp_path / "state"
    assert _pr(capsys, work, commits["v5"], state, "--format", "json")[0] == 1
    v5 = _only_record(state)
    data = json.loads(v5.read_text())
    data["identity"]["pull_request"]["head"] = "0123456789abcdef" * 2 + "01234567"
    v5.write_text(json.dumps(data))  # its name no longer matches its identity

    shutil.copytree(state, tmp_path / "copy")
    code, out, err = _pr(capsys, work, commits["v6"], tmp_path / "copy", "--format", "json", "--state-untrusted")
    assert code == 0 and json.loads(out)["delta"] is None
    assert "reviewer: note: no delta: state record" in err and "corrupt" in err and "not used" in err

    # A careful forger renames the record after its new identity and points the chain at it.
    _rekey(state, v5, data)
    code, out, err = _pr(capsys, work, commits["v6"], state, "--format", "json", "--state-untrusted")
    assert code == 0 and json.loads(out)["delta"] is None
    assert "reviewer: note: no delta: the previous version 0123456789ab cannot be reviewed again" in err
    assert "not used" in err


def test_a_state_directory_holding_links_is_not_used(pr_versions, capsys, tmp_path) -> None:
    work, commits = pr_versions
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    state = tmp_path / "state"
    state.mkdir()
    (state / "reviews").symlink_to(elsewhere)
    code, out, err = _pr(capsys, work, commits["v5"], state, "--format", "markdown", "--state-untrusted")
    assert code == 1 and out.rstrip().endswith("DO-NOT-MERGE")
    assert "untrusted state directory is not used" in err and "reviews" in err
    assert list(elsewhere.iterdir()) == []  # nothing written through the link


def test_a_record_of_another_pull_request_planted_in_the_chain_is_not_used(pr_versions, capsys, tmp_path) -> None:
    """Its commits are real and its diff hashes as recorded, but it reviewed pull request 99, not 7."""
    work, commits = pr_versions
    state = tmp_path / "state"
    assert main(["pr", "--repo", str(work), "--base", "origin/main", "--head", commits["v5"], "--pr", "99",
                 "--state-dir", str(state), "--format", "json"]) == 1
    capsys.readouterr()
    other = _only_record(state)
    (mine,) = [p for p in (state / "prs").glob("*.json")]
    # PR 7's chain, as a hostile workflow writes it: PR 99's review as its first version.
    assert _pr(capsys, work, commits["v6"], tmp_path / "scratch", "--format", "json")[0] == 0
    (seven,) = (tmp_path / "scratch" / "prs").glob("*.json")
    chain = json.loads(mine.read_text())
    (state / "prs" / seven.name).write_text(json.dumps(chain))
    assert json.loads(other.read_text())["identity"]["pull_request"]["number"] == 99

    code, out, err = _pr(capsys, work, commits["v6"], state, "--format", "json", "--state-untrusted")
    assert code == 0 and json.loads(out)["delta"] is None
    assert "another repository or pull request" in err


def test_a_previous_version_that_cannot_be_reviewed_again_never_fails_this_review(pr_versions, capsys, tmp_path) -> None:
    """A pointer to real commits whose review fails (here: an invalid reviewer.toml at the base it names)."""
    work, commits = pr_versions
    git(work, "checkout", "-q", "-B", "broken", "origin/main")
    (work / "reviewer.toml").write_text("[limits]\nmax_files = -1\n")
    git(work, "add", "reviewer.toml")
    git(work, "commit", "-q", "-m", "an invalid configuration")
    broken_base = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "-q", "-B", "on-broken", broken_base)
    (work / "extra.ts").write_text("export const x = 1\n")
    git(work, "add", "extra.ts")
    git(work, "commit", "-q", "-m", "a change on it")
    broken_head = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "-q", "--detach", "origin/main")
    state = tmp_path / "state"
    assert _pr(capsys, work, commits["v5"], state, "--format", "json")[0] == 1
    v5 = _only_record(state)
    data = json.loads(v5.read_text())
    diff = subprocess.run(["git", "-C", str(work), "diff", "--binary", "--full-index", "--no-color", "--no-ext-diff",
                           "--no-textconv", "-M", broken_base, broken_head], capture_output=True, check=True).stdout
    data["identity"]["pull_request"].update(base=broken_base, head=broken_head)
    data["identity"]["patch_sha256"] = hashlib.sha256(diff).hexdigest()
    _rekey(state, v5, data, patch=data["identity"]["patch_sha256"])

    code, out, err = _pr(capsys, work, commits["v6"], state, "--format", "json", "--state-untrusted")
    assert code == 0, err
    assert json.loads(out)["delta"] is None
    assert "could not be reviewed again" in err and "max_files" in err
