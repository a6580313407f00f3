"""Facts about a base tree (the vocabulary each family uses, inferred or not) are cached by tree id
and reused by the next review on that base: the report is byte-identical with a cold cache, a warm
one and none, and an entry that does not check out is recomputed, never read as "nothing found"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitrepo import make_change, sample_repo
from test_rule_fixtures import case_trees
from reviewer import review
from reviewer.engine import cache as cache_mod
from reviewer.engine import facts
from reviewer.report.formats import renderer

ROOT = Path(__file__).resolve().parent.parent
# A code base in its own vocabulary: lease-renewal infers its lease API from the base tree.
INFERRING_CASE = ROOT / "tests/fixtures/rules/lease-renewal/give-up-handlers"


def _render(report) -> tuple[str, str]:
    return renderer("markdown")(report), renderer("json")(report)


def _review(change, cache_dir: Path | None) -> tuple[str, str]:
    repo, base, patch = change
    request = review.Request(repo=repo, base=base, patch=patch, cache_dir=str(cache_dir) if cache_dir else None)
    return _render(review.run(request).report)


@pytest.fixture(scope="module")
def inferring(tmp_path_factory):
    base, patched = case_trees(INFERRING_CASE)
    repo, base_sha, patch_path, _ = make_change(tmp_path_factory.mktemp("inferring"), base, patched)
    return str(repo.path), base_sha, str(patch_path)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    git_dir, base, patches = sample_repo(tmp_path_factory.mktemp("sample"))
    return str(git_dir), base, patches


def _vocabulary_entries(root: Path) -> list[Path]:
    return sorted(root.glob(f"{facts.KIND}/*/*.json"))


def _counting_resolve(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = facts.resolve

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(facts, "resolve", counting)
    return calls


def test_inferred_vocabulary_is_reused_and_the_report_is_byte_identical(inferring, tmp_path, monkeypatch) -> None:
    reference = _review(inferring, None)
    assert "vocabulary inferred from the base tree" in reference[0]  # inference really ran
    cold = _review(inferring, tmp_path)
    assert cold == reference
    (entry,) = _vocabulary_entries(tmp_path)
    # The rules' outcomes are dropped, so the rules run again on the vocabulary read back from the entry.
    for outcome in tmp_path.glob("outcomes/*/*.json"):
        outcome.unlink()
    calls = _counting_resolve(monkeypatch)
    warm = _review(inferring, tmp_path)
    assert calls == []
    assert warm == reference
    assert _vocabulary_entries(tmp_path) == [entry]


def test_another_patch_on_the_same_base_reuses_the_base_trees_facts(sample, tmp_path, monkeypatch) -> None:
    git_dir, base, patches = sample
    v5, v6 = (git_dir, base, str(patches["v5"])), (git_dir, base, str(patches["v6"]))
    reference = _review(v6, None)
    _review(v5, tmp_path)
    calls = _counting_resolve(monkeypatch)
    assert _review(v6, tmp_path) == reference
    assert calls == []


def _rewrite(entry: Path, mutate, keep_checksum_valid: bool = False) -> None:
    data = json.loads(entry.read_text())
    mutate(data["outcome"] if keep_checksum_valid else data)
    if keep_checksum_valid:
        data["checksum"] = cache_mod._checksum(data["outcome"])
    entry.write_text(json.dumps(data))


def _first_inferred(payload) -> dict:
    return next(p for f in payload["families"].values() for p in f["inferred"])


CORRUPTIONS = {
    "truncated": lambda e: e.write_bytes(e.read_bytes()[:100]),
    "not json": lambda e: e.write_bytes(b"\xff\x00"),
    "wrong checksum": lambda e: _rewrite(e, lambda d: d["outcome"]["families"].clear()),
    "wrong key": lambda e: _rewrite(e, lambda d: d.update(key="1" * 64)),
    # Forgeries that pass the checksum: only the structural checks can catch them.
    "families dropped": lambda e: _rewrite(e, lambda o: o["families"].popitem(), True),
    "evidence line as string": lambda e: _rewrite(
        e, lambda o: _first_inferred(o)["evidence"][0].__setitem__(1, "7"), True),
    "words not booleans": lambda e: _rewrite(e, lambda o: o["words"].update({k: 1 for k in o["words"]}), True),
    "extra field": lambda e: _rewrite(e, lambda o: o.update(verdict="MERGE"), True),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_a_corrupt_vocabulary_entry_gives_the_report_of_no_cache(inferring, tmp_path, kind, monkeypatch) -> None:
    reference = _review(inferring, None)
    _review(inferring, tmp_path)
    (entry,) = _vocabulary_entries(tmp_path)
    CORRUPTIONS[kind](entry)
    for outcome in tmp_path.glob("outcomes/*/*.json"):
        outcome.unlink()
    calls = _counting_resolve(monkeypatch)
    assert _review(inferring, tmp_path) == reference
    assert calls == [1]  # recomputed, not read
    # ... and written again, whole: the next review reads it.
    data = json.loads(entry.read_text())
    assert data["checksum"] == cache_mod._checksum(data["outcome"]) and data["outcome"]["families"]


def test_the_cache_is_on_by_default_in_the_user_cache_and_off_with_no_cache(sample, tmp_path, monkeypatch, capsys) -> None:
    from reviewer.cli import main

    git_dir, base, patches = sample
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("REVIEWER_CACHE_DIR", raising=False)
    args = ["review", "--repo", git_dir, "--base", base, "--patch", str(patches["v5"]), "--no-state", "--format", "json"]
    assert main([*args, "--no-cache"]) == 1
    off = capsys.readouterr().out
    assert not (tmp_path / "xdg" / "reviewer").exists()
    assert main(args) == 1
    assert capsys.readouterr().out == off
    assert _vocabulary_entries(tmp_path / "xdg" / "reviewer")


def test_a_change_without_typescript_reads_the_same_report_from_a_warm_cache(tmp_path) -> None:
    # Nothing is inferred for such a change, yet the check after the rules still asks which default
    # names occur: the entry must not answer "absent" for words it never looked up.
    # The base names the defaults (opencode's claim API), so which of them occur decides the report.
    base = {"src/queue.ts": "export const stop = (db, claim) => SessionExecutionClaim.release(db, claim)\n",
            "README.md": "queue\n"}
    patched = {**base, "README.md": "queue, documented\n"}
    repo, base_sha, patch_path, _ = make_change(tmp_path / "plain", base, patched)
    change = (str(repo.path), base_sha, str(patch_path))
    reference = _review(change, None)
    cache = tmp_path / "cache"
    assert _review(change, cache) == reference
    for outcome in cache.glob("outcomes/*/*.json"):
        outcome.unlink()
    assert _vocabulary_entries(cache)
    assert _review(change, cache) == reference


def test_init_reads_its_proposals_for_a_tree_from_the_cache(inferring, tmp_path, capsys, monkeypatch) -> None:
    from reviewer.cli import main
    from reviewer.engine import vocabulary

    repo, base, _ = inferring
    args = ["init", "--repo", repo, "--base", base, "--cache-dir", str(tmp_path)]
    assert main([*args[:-2], "--no-cache"]) == 0
    reference = capsys.readouterr().out
    assert "Berths.prolong" in reference  # inferred, with evidence
    assert main(args) == 0 and capsys.readouterr().out == reference
    (entry,) = sorted(tmp_path.glob(f"{facts.INIT_KIND}/*/*.json"))
    proposing: list[int] = []
    real = vocabulary.propose
    monkeypatch.setattr("reviewer.init.propose", lambda *a, **k: proposing.append(1) or real(*a, **k))
    assert main(args) == 0 and capsys.readouterr().out == reference
    assert proposing == []
    # A forged entry (valid checksum, wrong shape) is recomputed, not printed.
    _rewrite(entry, lambda o: o.update(lines="# forged"), True)
    assert main(args) == 0 and capsys.readouterr().out == reference
    assert proposing == [1]


@pytest.mark.parametrize("kind", ["truncated", "not json", "wrong checksum", "extra field"])
def test_word_presence_learnt_on_a_tree_is_reused_and_a_corrupt_entry_is_ignored(inferring, tmp_path, kind) -> None:
    reference = _review(inferring, None)
    _review(inferring, tmp_path)
    (entry,) = sorted(tmp_path.glob(f"{facts.WORDS_KIND}/*/*.json"))
    assert any(json.loads(entry.read_text())["outcome"].values())  # some word does occur
    for outcome in tmp_path.glob("outcomes/*/*.json"):
        outcome.unlink()
    assert _review(inferring, tmp_path) == reference  # read back whole
    corrupt = dict(CORRUPTIONS, **{"extra field": lambda e: _rewrite(e, lambda o: o.update(x=[1]), True),
                                   "wrong checksum": lambda e: _rewrite(e, lambda d: d["outcome"].clear())})
    corrupt[kind](entry)
    for outcome in tmp_path.glob("outcomes/*/*.json"):
        outcome.unlink()
    assert _review(inferring, tmp_path) == reference
