"""What a rule family receives: the change set, both trees, its options, the TS model.

`ReviewContext` is the whole of a family's view of a review:

- `changeset`: every changed file, rebuilt from git objects (`by_path`,
  `source_paths()`, each file's `touches(line, end)` and hunks);
- `base` / `patched`: read access to any file of either tree (`TreeView`);
- `program` / `base_program`: the TypeScript model of each side (docs/model.md);
- `opts`: the family's options, typed from their declarations;
- `finding(check, ...)`: a finding of this family at its configured severity.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from reviewer.change.changeset import TYPESCRIPT_ONLY_SUFFIXES, ChangeSet, decode_text
from reviewer.engine.api import Options
from reviewer.engine.production import Production
from reviewer.gitio import BlobReader, Repo, ere_escape
from reviewer.report.model import Finding, InvariantResult, Location, Severity

if TYPE_CHECKING:
    from reviewer.engine.api import Family
    from reviewer.engine.shared import Shared
    from reviewer.typescript import Program, RoleTable

# How many files a sweep greps by name before one pass over the whole tree is cheaper.
GREP_PATHS_AT_ONCE = 400
# And how many bytes of names: a path may be thousands of characters, and the command line is bounded.
GREP_PATH_BYTES_AT_ONCE = 64 * 1024


def few_paths(paths: list[str] | tuple[str, ...]) -> bool:
    """Whether `paths` can be named on one git command line instead of grepping the whole tree."""
    size = sum(len(p.encode("utf-8", "surrogateescape")) for p in paths)
    return len(paths) <= GREP_PATHS_AT_ONCE and size <= GREP_PATH_BYTES_AT_ONCE


# Tree entry modes of regular files (what git grep reads; not links, not submodules).
_REGULAR = frozenset({"100644", "100755"})


_STRING = re.compile(r"""\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`""")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/")


def code_of(line: str) -> str:
    """One line of TypeScript without its string literals and comments (a line-level reading:
    a line that starts a comment, or continues a block comment with `*`, has no code)."""
    if line.lstrip().startswith(("//", "*")):
        return ""
    line = _BLOCK_COMMENT.sub(" ", _STRING.sub('""', line))
    cuts = [i for i in (line.find("//"), line.find("/*")) if i >= 0]  # a comment to the end of the line
    return line[:min(cuts)] if cuts else line


def word_pattern(word: str) -> str:
    """`word` as a whole word (what `git grep -w` means), one extended regex that Python reads the same."""
    return r"(^|[^A-Za-z0-9_])" + ere_escape(word) + r"([^A-Za-z0-9_]|$)"


def role_table(model: Mapping[str, Any]) -> "RoleTable":
    """The model's role table with the [model] entries of reviewer.toml in place of its defaults."""
    from reviewer.typescript import DEFAULT_ROLES, RoleTable

    if not model:
        return DEFAULT_ROLES
    return RoleTable(
        failure_handlers=model.get("failure_handlers", DEFAULT_ROLES.failure_handlers),
        finalizers=model.get("finalizers", DEFAULT_ROLES.finalizers),
        forks=frozenset(model.get("forks", DEFAULT_ROLES.forks)),
        commit_hooks=frozenset(model.get("commit_hooks", DEFAULT_ROLES.commit_hooks)),
        failure_cases=frozenset(model.get("failure_cases", DEFAULT_ROLES.failure_cases)),
        max_hops=model.get("max_hops", DEFAULT_ROLES.max_hops),
    )


def _program_of(tree: "TreeView", changed: Mapping[str, Any], model: Mapping[str, Any]) -> "Program":
    """The TypeScript model of one tree; the review and inference share it (the same key, "base")."""
    from reviewer.typescript import Program  # lazy: tree-sitter only when a rule asks

    return Program(tree.text, changed, roles=role_table(model), exists=tree.exists,
                   shared_trees=tree.shared)


class TreeView:
    """Read-only access to any file of one git tree, loaded lazily from objects."""

    def __init__(self, repo: Repo, tree: str, reader: BlobReader | None = None, shared: "Shared | None" = None) -> None:
        self._repo = repo
        self.tree = tree
        self._reader = reader
        # Content-addressed work a sweep reuses between reviews (engine/shared.py); None for one review.
        self.shared = shared
        self._cache: dict[str, bytes | None] = {}
        self._known: dict[str, bytes] = {}  # blob id -> content already read
        self._scanned: dict[str, set[str]] = {}  # regex -> TypeScript paths matching it (prescan)
        self._words: dict[str, bool] = {}  # word -> occurs as a whole word in TypeScript (prescan)
        self._word_at: dict[str, str] = {}  # word -> one path whose code holds it (learnt by this process's greps)
        self._parent: TreeView | None = None  # the tree this one is a patch of (`follows`)
        self._held: tuple[frozenset[str], list[tuple[str, str]]] | None = None  # `hold`
        self._matching: dict[tuple[tuple[str, ...], bool, tuple[str, ...] | None], tuple[str, ...]] = {}  # greps

    @property
    def repository(self) -> Repo:
        """The repository this tree is read from, for the one question a tree cannot answer:
        its commit's history (schema-prev-ids asks where an id was held). Every command
        still goes through the reviewer's shadow git directory (reviewer/gitio.py)."""
        return self._repo

    @cached_property
    def _entries(self) -> dict[str, tuple[str, str, str]]:
        return self._repo.ls_tree(self.tree)

    def exists(self, path: str) -> bool:
        return path in self._entries

    @cached_property
    def _sorted_paths(self) -> list[str]:
        return sorted(self._entries)

    def paths(self, prefix: str = "") -> tuple[str, ...]:
        # Rules ask for prefixes of a 30,000-file tree many times per review:
        # bisect into one sorted list instead of scanning every entry.
        ordered = self._sorted_paths
        if not prefix:
            return tuple(ordered)
        start = bisect.bisect_left(ordered, prefix)
        end = start
        while end < len(ordered) and ordered[end].startswith(prefix):
            end += 1
        return tuple(ordered[start:end])

    def oid(self, path: str) -> str | None:
        entry = self._entries.get(path)
        return entry[2] if entry and entry[1] == "blob" else None

    def read(self, path: str) -> bytes | None:
        if path not in self._cache:
            oid = self.oid(path)
            if oid is None:
                self._cache[path] = None
            elif oid in self._known:
                self._cache[path] = self._known[oid]
            elif self._reader is not None:
                self._cache[path] = self._reader.get(oid)
            else:
                self._cache[path] = self._repo.read_blobs([oid])[oid]
        return self._cache[path]

    def read_alone(self, path: str) -> bytes | None:
        """One file, without listing the whole tree: reviewer.toml is read before
        anything else needs the listing (on a 30,000-file tree, a tenth of a second)."""
        if "_entries" in self.__dict__:
            return self.read(path)
        entry = self._repo.ls_entry(self.tree, path)
        if entry is None or entry[1] != "blob":
            return None
        return self._repo.read_blobs([entry[2]])[entry[2]]

    def text(self, path: str) -> str | None:
        return decode_text(self.read(path))

    def remember(self, blobs: Mapping[str, bytes]) -> None:
        """Contents already read by blob id (the change set's), so the rules'
        reads of changed files do not ask git a second time."""
        self._known.update(blobs)

    def words_present(self, words: list[str]) -> set[str]:
        """Which of `words` occur as whole words in the code of the tree's TypeScript files (one
        `git grep`, none when `prescan` already read them).

        Code, not comments or strings: a base tree must not make a name look present (and the
        family keep looking for it instead of the code base's own) with `// Step 1` or a log line.
        """
        unknown = [w for w in words if w not in self._words]
        if unknown and self._parent is not None:
            unknown = self._derive_words(unknown)
        if unknown:
            self.prescan(unknown, [])
        return {w for w in words if self._words.get(w)}

    def follows(self, parent: "TreeView") -> None:
        """This tree is `parent` with a patch applied: `words_present` answers from what `parent`
        learnt and the files that differ, instead of grepping the whole tree again."""
        self._parent = parent

    @cached_property
    def _differing(self) -> tuple[frozenset[str], tuple[str, ...]] | None:
        """(every path that differs from the parent tree, the TypeScript blobs among them here);
        None when there are too many to name on one command line."""
        assert self._parent is not None
        paths = frozenset(self._repo.diff_trees(self._parent.tree, self.tree))
        ours = tuple(sorted(p for p in paths if p in self._typescript_blobs))
        return (paths, ours) if few_paths(ours) else None

    def _derive_words(self, words: list[str]) -> list[str]:
        """Answer what the parent tree's answers decide; return the words still unknown.

        A word the parent's code never holds is here only if a differing file holds it (those
        files are grepped alone). A word the parent holds in a file this patch leaves alone is
        here too: that path names the same blob in both trees."""
        parent = self._parent
        assert parent is not None
        differing = self._differing
        if differing is None:
            return words
        paths, ours = differing
        rest: list[str] = []
        absent: list[str] = []
        for word in words:
            known = parent._words.get(word)
            at = parent._word_at.get(word)
            if known is True and at is not None and at not in paths:
                self._words[word] = True
                self._word_at[word] = at
            elif known is False:
                absent.append(word)
            else:
                rest.append(word)
        if absent:
            seen: dict[str, str] = {}
            word_rx = _WordPatterns(absent)
            lines = self._repo.grep_lines(self.tree, absent, TYPESCRIPT_ONLY_SUFFIXES, ours) if ours else []
            _judge(lines, {}, word_rx, list(absent), {}, seen)
            self._words.update({w: w in seen for w in absent})
            self._word_at.update(seen)
        return rest

    def known_words(self) -> dict[str, bool]:
        """Every `words_present` answer learnt so far (to keep for the next review of this tree)."""
        return dict(self._words)

    def know_words(self, present: Mapping[str, bool]) -> None:
        """Answers to `words_present` learnt earlier for this same tree (reviewer/engine/facts.py)."""
        for word, found in present.items():
            self._words.setdefault(word, found)

    def files_naming(self, words: list[str]) -> tuple[str, ...]:
        """The tree's TypeScript files in which one of `words` occurs as a whole word (one `git grep`)."""
        return self._repo.grep_word_files(self.tree, words, TYPESCRIPT_ONLY_SUFFIXES)

    def files_matching(self, patterns: list[str], all_match: bool = False,
                       within: Iterable[str] | None = None) -> tuple[str, ...]:
        """The tree's TypeScript files (of `within` only, when given) whose text matches any (or every) of the
        extended regexes (one `git grep`, of those files alone when they are few; none when `prescan` already
        read them)."""
        if within is not None:
            wanted = sorted({p for p in within if p in self._typescript_blobs})
            if not wanted:
                return ()
            if few_paths(wanted) and self.shared is None and not all(p in self._scanned for p in patterns):
                key = (tuple(patterns), all_match, tuple(wanted))
                if key not in self._matching:
                    self._matching[key] = self._repo.grep_files(self.tree, patterns, TYPESCRIPT_ONLY_SUFFIXES,
                                                                all_match, wanted)
                return self._matching[key]
            chosen = set(wanted)
            return tuple(p for p in self.files_matching(patterns, all_match) if p in chosen)
        if patterns and all(p in self._scanned for p in patterns):
            sets = [self._scanned[p] for p in patterns]
            found = set.intersection(*sets) if all_match else set().union(*sets)
            return tuple(sorted(found))
        if self.shared is None:
            # Asked again by another family's inference (lease-renewal's, through cleanup-propagation's).
            key = (tuple(patterns), all_match, None)
            if key not in self._matching:
                self._matching[key] = self._repo.grep_files(self.tree, patterns, TYPESCRIPT_ONLY_SUFFIXES, all_match)
            return self._matching[key]
        # A sweep asks each blob once: whether a file matches is a fact of its content.
        memo = self.shared.matching_memo((tuple(patterns), all_match, TYPESCRIPT_ONLY_SUFFIXES))
        files = self._typescript_blobs
        unseen = sorted(path for path, oid in files.items() if oid not in memo)
        if unseen:
            whole = not few_paths(unseen)
            hits = set(self._repo.grep_files(self.tree, patterns, TYPESCRIPT_ONLY_SUFFIXES, all_match,
                                             None if whole else unseen))
            for path in (files if whole else unseen):
                memo[files[path]] = path in hits
        return tuple(sorted(path for path, oid in files.items() if memo[oid]))

    @cached_property
    def _typescript_blobs(self) -> dict[str, str]:
        """TypeScript path -> blob id, for every such regular file of the tree."""
        # Regular files only: git grep never reads a symbolic link, whose blob may be the very bytes of a
        # regular file (a memo by blob id must not give one the other's answer).
        return {path: entry[2] for path, entry in self._entries.items()
                if entry[0] in _REGULAR and path.endswith(TYPESCRIPT_ONLY_SUFFIXES)}

    def prescan(self, words: list[str], hints: list[tuple[str, tuple[str, ...]]]) -> None:
        """Answer later `words_present` for `words` and `files_matching` for each hint's regex from one
        fixed-string `git grep` (git's fast path) over the literals involved.

        A hint is (regex, literals): every line the regex matches contains one of its literals, so git
        narrows to those lines and Python's `re` decides. A regex Python cannot compile is left to git.
        """
        compiled: dict[str, tuple[re.Pattern[str], tuple[str, ...], re.Pattern[str]]] = {}
        for pattern, literals in hints:
            if pattern in self._scanned or pattern in compiled or not literals:
                continue
            try:
                # The literals as one alternation: "does the line hold one of them" in one C call per line.
                compiled[pattern] = (re.compile(pattern), literals, re.compile("|".join(map(re.escape, literals))))
            except re.error:
                continue
        new_words = sorted({w for w in words if w and w not in self._words})
        literals = {lit for _, lits, _ in compiled.values() for lit in lits} | set(new_words)
        if not literals:
            return
        found: dict[str, set[str]] = {p: set() for p in compiled}
        seen: dict[str, str] = {}  # word -> the first path whose code holds it
        word_rx = _WordPatterns(new_words)
        if self.shared is None:
            held = self._held
            # A line held for another literal is text decoded with U+FFFD for bytes that are not UTF-8: a
            # question holding U+FFFD itself would find it there, where git (comparing bytes) would not.
            if held is not None and literals <= held[0] and not any("\ufffd" in lit for lit in literals):
                lines = held[1]
            else:
                lines = self._grep_lines(sorted(literals))
            _judge(lines, compiled, word_rx, list(new_words), found, seen)
        else:
            # A sweep judges each blob's lines once per set of questions: a commit
            # then only reads the blobs its parent did not have.
            files, lines = self._blob_lines(sorted(literals))
            asked = sorted("\x01".join((pattern, *lits)) for pattern, (_, lits, _) in compiled.items())
            judged = self.shared.judged_memo((*sorted(literals), "\0", *asked, "\0", *new_words))
            for path, oid in files.items():
                verdict = judged.get(oid)
                if verdict is None:
                    blob_found: dict[str, set[str]] = {p: set() for p in compiled}
                    blob_seen: dict[str, str] = {}
                    _judge(((path, line) for line in lines[oid]), compiled, word_rx, list(new_words), blob_found,
                           blob_seen)
                    verdict = judged[oid] = (tuple(p for p, hit in blob_found.items() if hit), tuple(blob_seen))
                for pattern in verdict[0]:
                    found[pattern].add(path)
                for word in verdict[1]:
                    seen.setdefault(word, path)
        self._scanned.update(found)
        self._words.update({w: w in seen for w in new_words})
        self._word_at.update({w: at for w, at in seen.items() if w not in self._word_at})

    def hold(self, literals: set[str]) -> None:
        """Grep the lines holding any of `literals` once and keep them: each later `prescan` whose
        literals are among them judges those lines instead of grepping the tree again (a line holding
        none of a question's literals answers nothing to it). A sweep's memo by blob does this already."""
        if self.shared is None and literals:
            self._held = (frozenset(literals), self._grep_lines(sorted(literals)))

    def release(self) -> None:
        """Drop what `hold` kept."""
        self._held = None

    def _grep_lines(self, literals: list[str]) -> list[tuple[str, str]]:
        """`Repo.grep_lines` over the tree's TypeScript files; with a sweep's Shared, only the
        files whose blobs no earlier review of the sweep grepped for the same literals."""
        if self.shared is None:
            return self._repo.grep_lines(self.tree, literals, TYPESCRIPT_ONLY_SUFFIXES)
        files, memo = self._blob_lines(literals)
        return [(path, line) for path, oid in files.items() for line in memo[oid]]

    def _blob_lines(self, literals: list[str]) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
        """(TypeScript path -> blob id, blob id -> its lines holding a literal), grepping only
        the blobs no earlier review of the sweep grepped for the same literals."""
        assert self.shared is not None
        memo = self.shared.grep_memo((tuple(literals), TYPESCRIPT_ONLY_SUFFIXES))
        files = self._typescript_blobs
        unseen = sorted(path for path, oid in files.items() if oid not in memo)
        if unseen:
            # Past a few hundred files one pass over the whole tree is cheaper
            # (and a command line of paths would grow without bound).
            whole = not few_paths(unseen)
            found: dict[str, list[str]] = {}
            for path, line in self._repo.grep_lines(self.tree, literals, TYPESCRIPT_ONLY_SUFFIXES,
                                                    None if whole else unseen):
                found.setdefault(path, []).append(line)
            for path in (files if whole else unseen):
                memo[files[path]] = tuple(found.get(path, ()))
        return files, memo

    def prefetch(self, paths: list[str]) -> None:
        """Read many files with one git process."""
        wanted = {p: self.oid(p) for p in paths if p not in self._cache and self.oid(p) not in self._known}
        blobs = self._repo.read_blobs([o for o in wanted.values() if o])
        for path, oid in wanted.items():
            self._cache[path] = blobs.get(oid) if oid else None


class _WordPatterns:
    """Each word's whole-word pattern, compiled the first time a line holds the word: a list of
    200,000 configured names costs a pattern per name that occurs, not one per name."""

    def __init__(self, words: list[str]) -> None:
        self.words = words
        self._compiled: dict[str, re.Pattern[str]] = {}

    def search(self, word: str, code: str) -> bool:
        rx = self._compiled.get(word)
        if rx is None:
            rx = self._compiled[word] = re.compile(word_pattern(word))
        return rx.search(code) is not None

    @staticmethod
    def plain(word: str) -> bool:
        """Whether a whole-word match of `word` in `code_of(line)` is one in `line` too: `code_of` only puts
        quotes and spaces (never word characters) where strings and comments were, and cuts at a `/`, so a
        word of identifier characters and dots keeps the neighbours it had, or gains non-word ones."""
        return _PLAIN_WORD.fullmatch(word) is not None


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_$.]+")


def _judge(
    lines: Iterable[tuple[str, str]],
    compiled: Mapping[str, tuple[re.Pattern[str], tuple[str, ...], re.Pattern[str]]],
    word_rx: _WordPatterns,
    pending: list[str],
    found: dict[str, set[str]],
    seen: dict[str, str],
) -> None:
    """What grepped (path, line)s answer, in their order: the paths each hint's regex matches on some
    line (into `found`), and for each word of `pending` the first path whose code uses it (into
    `seen`; the word then leaves `pending`).

    Each question is first put to a file's lines joined (one search per file, not one per line; no
    literal or word spans a line break), and only a file that holds the literal or the word is read
    line by line: on a tree whose code names the vocabulary everywhere, most questions are settled
    by the first file or never arise.
    """
    for path, group in groupby(lines, key=itemgetter(0)):
        texts = [line for _, line in group]
        joined = "\n".join(texts)
        for pattern, (rx, _, holds) in compiled.items():
            if path in found[pattern] or not holds.search(joined):
                continue
            if any(holds.search(line) and rx.search(line) for line in texts):
                found[pattern].add(path)
        if not pending:
            continue
        codes: dict[int, str] = {}
        for word in [w for w in pending if w in joined]:
            plain = word_rx.plain(word)
            for number, line in enumerate(texts):
                if word not in line or (plain and not word_rx.search(word, line)):
                    continue  # a whole word of the code is a whole word of the line (see `_WordPatterns.plain`)
                code = codes.get(number)
                if code is None:
                    code = codes[number] = code_of(line)
                if word_rx.search(word, code):
                    seen[word] = path
                    pending.remove(word)
                    break


@dataclass
class ReviewContext:
    changeset: ChangeSet
    base: TreeView
    patched: TreeView
    family: "Family"
    options: Mapping[str, Any]
    severities: Mapping[str, Severity] = field(default_factory=dict)
    _programs: dict[str, "Program"] = field(default_factory=dict)
    # --scope: "changed", "file" or "all". Under "all" a family also examines unchanged
    # files that use its idioms, so what it finds there is counted, not only listed.
    scope: str = "changed"
    # [model] of reviewer.toml: role-table entries replacing the model's defaults.
    model: Mapping[str, Any] = field(default_factory=dict)
    # The results of the families that ran before this one (empty unless the family is
    # `after_findings`): their findings, after [disable], before scope and suppressions.
    prior: tuple["InvariantResult", ...] = ()

    def _program(self, side: str) -> "Program":
        if side not in self._programs:
            tree = self.patched if side == "patched" else self.base
            changed = {f.path: f.added_lines for f in self.changeset.files} if side == "patched" else {}
            self._programs[side] = _program_of(tree, changed, self.model)
        return self._programs[side]

    @cached_property
    def production(self) -> Production:
        """Which files are production code (tests, vendored, built and linguist-marked files are
        not), judged with the base tree's `.gitattributes`: a patch cannot mark itself generated."""
        return Production(self.base.text)

    @property
    def widened(self) -> bool:
        """`--scope all`: judge unchanged code of the examined files as changed code is judged."""
        return self.scope == "all"

    @cached_property
    def opts(self) -> Options:
        """The family's options, typed (reviewer/engine/api.py `Options`): `ctx.opts.release` is a tuple."""
        return Options(self.family.options, self.options)

    @property
    def program(self) -> "Program":
        """The TypeScript model of the patched tree (changed files and what they import)."""
        return self._program("patched")

    @property
    def base_program(self) -> "Program":
        return self._program("base")

    def severity(self, check: str) -> Severity:
        spec = self.family.check(check)
        return self.severities.get(spec.id, spec.severity)

    def finding(
        self,
        check: str,
        *,
        title: str,
        message: str,
        location: Location | None,
        related: tuple[Location, ...] | list[Location] = (),
        failure_sequence: tuple[str, ...] | list[str] = (),
        anchor: str = "",
    ) -> Finding:
        """A finding of this family with the configured severity for `check`."""
        spec = self.family.check(check)
        return Finding(
            rule=spec.id,
            severity=self.severity(check),
            title=title,
            message=message,
            location=location,
            related=tuple(related),
            failure_sequence=tuple(failure_sequence),
            anchor=anchor,
        )


@dataclass
class Corpus:
    """What vocabulary inference (`Family.infer`) reads: the base tree, its model, the family's options.

    Inference proposes names, it never judges a change: it sees no change set.
    `candidates` narrows the tree to the files worth parsing with one `git grep`.
    """

    tree: TreeView
    family: "Family"
    options: Mapping[str, Any]
    _programs: dict[str, "Program"] = field(default_factory=dict)
    # The vocabulary options asked for (None: all, as `reviewer init` asks).
    wanted: frozenset[str] | None = None
    model: Mapping[str, Any] = field(default_factory=dict)  # [model], as for a review
    # Shared by every family's inference in one review (table declarations are read once).
    memo: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def opts(self) -> Options:
        return Options(self.family.options, self.options)

    def wants(self, option: str) -> bool:
        return self.wanted is None or option in self.wanted

    @property
    def program(self) -> "Program":
        """The TypeScript model of the base tree (shared with the review's base program)."""
        if "base" not in self._programs:
            self._programs["base"] = _program_of(self.tree, {}, self.model)
        return self._programs["base"]

    def candidates(self, patterns: list[str], all_match: bool = False,
                   within: Iterable[str] | None = None) -> tuple[str, ...]:
        """TypeScript files of the base tree (of `within` only, when given) whose text matches any (with
        `all_match`, every one) of `patterns` (extended regexes)."""
        return self.tree.files_matching(patterns, all_match, within)

    @cached_property
    def production(self) -> Production:
        """Which files of the base tree are production code (as `ReviewContext.production`)."""
        return Production(self.tree.text)
