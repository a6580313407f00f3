"""Look-alike paths (issue 24, item 4): a changed path that mixes scripts, or whose UTS #39
skeleton is that of another path of the base tree or of the patch, fails integrity/paths,
and is shown escaped in every format. Real repositories, the real command line."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from gitrepo import make_change
from reviewer.cli import main
from reviewer.gate import lookalike
from reviewer.gitio import Repo

CYR_I = "\u0456"  # CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I
OMICRON = "\u03bf"  # GREEK SMALL LETTER OMICRON
CACHE_CYRILLIC = "\u0441\u0430\u0441\u04bb\u0435"  # с а с һ е: reads as "cache"
SOURCE = "export const input = 1\n"
FORMATS = ("markdown", "json", "sarif", "github", "comment")


def _review(capsys, repo, base: str, patch: Path, fmt: str = "json") -> tuple[int, str]:
    code = main(["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--no-state",
                 "--format", fmt])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return code, out


def _paths_check(capsys, repo, base: str, patch: Path) -> tuple[int, dict, dict]:
    code, out = _review(capsys, repo, base, patch)
    report = json.loads(out)
    return code, report, next(c for c in report["checks"] if c["id"] == "integrity/paths")


def _assert_never_raw(capsys, repo, base: str, patch: Path, raw: str) -> None:
    for fmt in FORMATS:
        code, out = _review(capsys, repo, base, patch, fmt)
        assert code == 1, fmt
        assert out.strip(), fmt
        for ch in raw:
            assert ch not in out, (fmt, ch)


# ------------------------------------------------------------------ look-alikes fail


def test_a_rename_to_a_cyrillic_i_is_a_lookalike_of_the_old_path(tmp_path: Path, capsys) -> None:
    old = "packages/core/src/session/input.ts"
    new = f"packages/core/src/sess{CYR_I}on/input.ts"
    repo, base, patch, _ = make_change(tmp_path, {old: SOURCE, "packages/core/src/index.ts": "export {}\n"},
                                       {old: None, new: SOURCE}, "-M")
    assert b"rename from" in patch.read_bytes()
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and report["verdict"] == "DO-NOT-MERGE"
    assert paths["status"] == "fail"
    detail = paths["detail"]
    assert "packages/core/src/sess\\u0456on/input.ts" in detail and f"'{old}'" in detail
    assert "look-alike" in detail and "mixes scripts (Cyrillic, Latin)" in detail
    assert CYR_I not in detail
    assert any(f["rule"] == "integrity/paths" and f["severity"] == "must-fix" for f in report["findings"])
    # Not reconstructed: the file table shows the name escaped too.
    assert all(CYR_I not in f["path"] for f in report["files"])
    assert any("\\u0456" in f["path"] for f in report["files"])
    _assert_never_raw(capsys, repo, base, patch, CYR_I)


def test_a_whole_cyrillic_directory_reads_as_an_existing_one(tmp_path: Path, capsys) -> None:
    new = f"packages/core/src/{CACHE_CYRILLIC}/evict.ts"
    repo, base, patch, _ = make_change(tmp_path, {"packages/core/src/cache/store.ts": SOURCE}, {new: SOURCE})
    assert lookalike.mixed_scripts(CACHE_CYRILLIC) == ()  # one script: only the skeleton gives it away
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and report["verdict"] == "DO-NOT-MERGE" and paths["status"] == "fail"
    assert "its directory 'packages/core/src/\\u0441\\u0430\\u0441\\u04bb\\u0435/'" in paths["detail"]
    assert "'packages/core/src/cache/'" in paths["detail"]
    _assert_never_raw(capsys, repo, base, patch, CACHE_CYRILLIC)


def test_a_mixed_script_new_file_fails_without_any_twin(tmp_path: Path, capsys) -> None:
    new = f"src/w{CYR_I}dget.ts"
    repo, base, patch, _ = make_change(tmp_path, {"src/a.ts": SOURCE}, {new: SOURCE})
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and paths["status"] == "fail"
    assert paths["detail"] == "'src/w\\u0456dget.ts': look-alike path: 'w\\u0456dget' mixes scripts (Cyrillic, Latin)"
    _assert_never_raw(capsys, repo, base, patch, CYR_I)


def test_a_greek_omicron_in_a_file_name_fails(tmp_path: Path, capsys) -> None:
    new = f"src/r{OMICRON}uter.ts"
    repo, base, patch, _ = make_change(tmp_path, {"src/router.ts": SOURCE}, {new: SOURCE})
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and report["verdict"] == "DO-NOT-MERGE" and paths["status"] == "fail"
    assert "'src/r\\u03bfuter.ts': look-alike path: looks like 'src/router.ts'" in paths["detail"]
    assert "mixes scripts (Greek, Latin)" in paths["detail"]
    _assert_never_raw(capsys, repo, base, patch, OMICRON)


def test_a_decomposed_twin_of_an_existing_name_fails(tmp_path: Path, capsys) -> None:
    nfc = "docs/r\u00e9sum\u00e9.md"
    nfd = unicodedata.normalize("NFD", nfc)
    repo, base, patch, _ = make_change(tmp_path, {nfc: "cv\n"}, {nfd: "other cv\n"})
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and paths["status"] == "fail"
    assert "'docs/re\\u0301sume\\u0301.md': look-alike path: looks like 'docs/r\\xe9sum\\xe9.md'" in paths["detail"]


def test_two_new_paths_of_the_patch_that_read_alike_fail(tmp_path: Path, capsys) -> None:
    repo, base, patch, _ = make_change(tmp_path, {"README.md": "x\n"},
                                       {"src/cache/a.ts": SOURCE, f"src/{CACHE_CYRILLIC}/b.ts": SOURCE})
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and paths["status"] == "fail"
    assert "looks like 'src/cache/'" in paths["detail"]


def test_both_sides_of_a_rename_are_checked(tmp_path: Path, capsys) -> None:
    lookalike_name = f"src/w{CYR_I}dget.ts"
    repo, base, patch, _ = make_change(tmp_path, {lookalike_name: SOURCE},
                                       {lookalike_name: None, "src/widget.ts": SOURCE}, "-M")
    assert b"rename from" in patch.read_bytes()
    code, _, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and paths["status"] == "fail"
    assert "'src/w\\u0456dget.ts': look-alike path" in paths["detail"]


# ------------------------------------------------------------------ what passes


@pytest.mark.parametrize("name", ["docs/\u8aac\u660e.md", "docs/r\u00e9sum\u00e9.md", "docs/\u0440\u0443\u043a\u043e\u0432\u043e\u0434\u0441\u0442\u0432\u043e.md",
                                  "docs/README\u8aac\u660e.md", "docs/\u30c9\u30ad\u30e5\u30e1\u30f3\u30c8.md"])
def test_a_single_script_name_confusable_with_nothing_passes(tmp_path: Path, capsys, name: str) -> None:
    repo, base, patch, _ = make_change(tmp_path, {"docs/README.md": "docs\n"}, {name: "text\n"})
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 0 and report["verdict"] == "MERGE", paths
    assert paths["status"] == "pass"
    assert [f["path"] for f in report["files"]] == [name]


def test_editing_an_existing_non_ascii_file_passes(tmp_path: Path, capsys) -> None:
    name = "docs/\u8aac\u660e.md"
    repo, base, patch, _ = make_change(tmp_path, {name: "v1\n", "docs/a.md": "a\n"}, {name: "v2\n"})
    code, _, paths = _paths_check(capsys, repo, base, patch)
    assert code == 0 and paths["status"] == "pass"


def test_deleting_a_lookalike_passes(tmp_path: Path, capsys) -> None:
    name = f"src/w{CYR_I}dget.ts"
    repo, base, patch, _ = make_change(tmp_path, {name: SOURCE, "src/a.ts": SOURCE}, {name: None})
    code, _, paths = _paths_check(capsys, repo, base, patch)
    assert code == 0 and paths["status"] == "pass"


def test_ascii_paths_skip_the_check_without_listing_the_tree(tmp_path: Path, capsys, monkeypatch) -> None:
    repo, base, patch, _ = make_change(tmp_path, {"src/session/input.ts": SOURCE},
                                       {"src/session/input.ts": "export const input = 2\n", "src/m.ts": SOURCE})

    def refuse(*_args, **_kwargs):
        raise AssertionError("the base tree was listed for an all-ASCII patch")

    monkeypatch.setattr(Repo, "ls_tree", refuse)
    monkeypatch.setattr(lookalike, "_Twins", refuse)
    code = main(["verify", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    paths = next(c for c in json.loads(out)["checks"] if c["id"] == "integrity/paths")
    assert paths["status"] == "pass"


# ------------------------------------------------------------------ the pieces


def test_skeletons_and_scripts_come_from_the_unicode_data() -> None:
    assert lookalike.skeleton(f"sess{CYR_I}on") == "session"
    assert lookalike.skeleton(CACHE_CYRILLIC) == "cache"
    assert lookalike.skeleton("se\u200dssion") == "session"  # a default-ignorable code point is dropped
    assert lookalike.mixed_scripts(f"r{OMICRON}uter") == ("Greek", "Latin")
    assert lookalike.mixed_scripts("\u8aac\u660eREADME") == ()  # Latin + Han: "Highly Restrictive" allows it
    assert lookalike.mixed_scripts("\u0395\u03bb\u0440\u0443\u0441") == ("Cyrillic", "Greek")
    names = {name for name, _ in lookalike._script_patterns()}
    assert {"Latin", "Cyrillic", "Greek", "Han", "Hiragana", "Katakana", "Hangul", "Bopomofo"} <= names
    assert len(names) > 150 and "Common" not in names and "Inherited" not in names


def test_a_slash_lookalike_reads_as_a_directory() -> None:
    problems = lookalike.lookalike_problems(["src\u2215lease.ts"], lambda: ["src/lease.ts", "src\u2215lease.ts"])
    assert problems == {"src\u2215lease.ts": "look-alike path: looks like 'src/lease.ts' (same Unicode confusable skeleton)"}


def test_escaping_keeps_ascii_and_escapes_the_rest() -> None:
    assert lookalike.escaped(f"a/sess{CYR_I}on\x1b.ts") == "a/sess\\u0456on\\x1b.ts"
    assert lookalike.escaped("x\U0001d5ba") == "x\\U0001d5ba"
    assert lookalike.escaped("plain/path.ts") == "plain/path.ts"


@pytest.mark.parametrize(("name", "says"), [
    ("src/i\u0307ndex.ts", "'i\\u0307ndex' carries combining marks NFC leaves apart (U+0307)"),  # a dot on the dot
    ("src/config\u0336.ts", "'config\\u0336' carries combining marks NFC leaves apart (U+0336)"),  # an overlay
    ("src/\uff53\uff45\uff53\uff53\uff49\uff4f\uff4e.ts", "spells the ASCII name 'session.ts' in other characters"),
    ("lib/\u0455\u0441\u043e\u0440\u0435.ts", "spells the ASCII name 'scope.ts' in other characters"),  # all Cyrillic
])
def test_marks_and_whole_names_in_other_characters_fail_without_a_twin(tmp_path: Path, capsys, name: str, says: str) -> None:
    """Found by a hostile review: none of these has a twin in the tree, and each read as ASCII."""
    repo, base, patch, _ = make_change(tmp_path, {"src/index.ts": SOURCE}, {name: SOURCE})
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and report["verdict"] == "DO-NOT-MERGE" and paths["status"] == "fail"
    assert says in paths["detail"]


def test_a_fullwidth_directory_reads_as_the_existing_one(tmp_path: Path, capsys) -> None:
    new = "packages/core/src/\uff53\uff45\uff53\uff53\uff49\uff4f\uff4e/input.ts"
    repo, base, patch, _ = make_change(tmp_path, {"packages/core/src/session/input.ts": SOURCE}, {new: SOURCE})
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert code == 1 and paths["status"] == "fail"
    assert "looks like 'packages/core/src/session/input.ts'" in paths["detail"]


@pytest.mark.parametrize("name", ["docs/\u0939\u093f\u0928\u094d\u0926\u0940.md", "docs/\u304b\u3099.md",
                                  "docs/re\u0301sume\u0301.md", "docs/\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac.md"])
def test_marks_that_belong_to_their_letters_pass(tmp_path: Path, capsys, name: str) -> None:
    """Devanagari vowel signs, a kana voicing mark and Latin accents that NFC composes are ordinary text."""
    repo, base, patch, _ = make_change(tmp_path, {"src/index.ts": SOURCE}, {name: SOURCE})
    code, report, paths = _paths_check(capsys, repo, base, patch)
    assert paths["status"] == "pass", paths["detail"]
