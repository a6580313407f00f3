"""What one process may reuse between reviews of one repository (`reviewer sweep`).

Everything here is keyed by content (blob ids, the bytes' hash), so reusing it
can never change a report: consecutive commits share most of their files, and
a sweep then parses and greps only what changed between them. A single
review has no Shared and builds everything afresh, as before.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

# Trees kept for reuse. A tree-sitter tree of a typical source file is a few
# hundred kilobytes; this bounds what a long sweep keeps alive.
MAX_TREES = 3_000
# Blobs whose grep lines are kept per set of literals; past it the memo starts over.
MAX_GREP_BLOBS = 200_000


@dataclass
class Shared:
    """A sweep's reusable, content-addressed work; never part of a review's identity."""

    # (sorted literals, suffixes) -> blob id -> the lines of that blob git grep
    # returned for those literals (empty: none).
    grep_lines: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # (questions asked of the lines: hint regexes and words) -> blob id -> (regexes its
    # lines match, words its code uses): the prescan's judgement of each blob.
    judged: dict[tuple[str, ...], dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = field(default_factory=dict)
    # (extended regexes, all must match, suffixes) -> blob id -> whether that blob matches:
    # `TreeView.files_matching` answered per blob.
    matching: dict[tuple[tuple[str, ...], bool, tuple[str, ...]], dict[str, bool]] = field(default_factory=dict)
    # (dialect, sha1 of the bytes) -> tree-sitter tree, least recently used first.
    trees: "OrderedDict[tuple[str, str], Any]" = field(default_factory=OrderedDict)

    def grep_memo(self, key: tuple[tuple[str, ...], tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        memo = self.grep_lines.get(key)
        if memo is None or len(memo) > MAX_GREP_BLOBS:
            memo = self.grep_lines[key] = {}
        return memo

    def judged_memo(self, key: tuple[str, ...]) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        memo = self.judged.get(key)
        if memo is None or len(memo) > MAX_GREP_BLOBS:
            memo = self.judged[key] = {}
        return memo

    def matching_memo(self, key: tuple[tuple[str, ...], bool, tuple[str, ...]]) -> dict[str, bool]:
        memo = self.matching.get(key)
        if memo is None or len(memo) > MAX_GREP_BLOBS:
            memo = self.matching[key] = {}
        return memo

    def tree(self, key: tuple[str, str]) -> Any | None:
        found = self.trees.get(key)
        if found is not None:
            self.trees.move_to_end(key)
        return found

    def keep_tree(self, key: tuple[str, str], tree: Any) -> None:
        self.trees[key] = tree
        if len(self.trees) > MAX_TREES:
            self.trees.popitem(last=False)
