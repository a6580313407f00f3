"""Command line: `reviewer review|verify|pr|diff|history|reconstruct|rules|init|demo`.

Exit status: 0 MERGE, 1 DO-NOT-MERGE, 2 the review could not be produced
(one line on standard error, no traceback). Nothing here ever turns an
internal error into 0.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from reviewer import RULESET_VERSION, __version__
from reviewer.errors import ReviewerError

EXIT_MERGE, EXIT_BLOCK, EXIT_ERROR = 0, 1, 2
FORMATS = ("markdown", "json", "sarif", "github", "comment")  # reviewer.report.formats.FORMATS, without importing it


@dataclass(frozen=True)
class Output:
    fmt: str
    path: str | None  # None: standard output


def parse_formats(specs: Sequence[str] | None) -> tuple[Output, ...]:
    outputs: list[Output] = []
    for spec in specs or ["markdown"]:
        fmt, sep, path = spec.partition("=")
        if fmt not in FORMATS:
            raise ReviewerError(f"--format {spec!r}: unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
        if sep and not path:
            raise ReviewerError(f"--format {spec!r}: empty PATH after '='")
        outputs.append(Output(fmt, path or None))
    if sum(1 for o in outputs if o.path is None) > 1:
        raise ReviewerError("--format: at most one format may go to standard output; give the others =PATH")
    paths = [o.path for o in outputs if o.path]
    if len(set(paths)) != len(paths):
        raise ReviewerError("--format: two formats name the same PATH")
    return tuple(outputs)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # The message is printed after "reviewer: ": name the subcommand, not the program twice,
        # and say where the usage is (the contract is one line on standard error).
        command = self.prog.removeprefix("reviewer").strip()
        hint = f"reviewer {command} --help" if command else "reviewer --help"
        raise ReviewerError(f"{command + ': ' if command else ''}{message} (see {hint})")


def _add_inputs(p: argparse.ArgumentParser, with_formats: bool = True, pr: bool = False) -> None:
    p.add_argument("--repo", required=True,
                   help="git repository: the top level of a checkout, linked worktree or submodule checkout, or a "
                        "bare repository; never modified")
    if pr:
        p.add_argument("--base", required=True, help="base ref or commit of the pull request (e.g. origin/main)")
        p.add_argument("--head", required=True, help="head ref or commit of the pull request")
        p.add_argument("--pr", type=int, metavar="N",
                       help="the pull request's number: chains its versions into deltas (default: pull_request.number "
                            "of $GITHUB_EVENT_PATH, else the head branch's name; a detached head has no delta)")
        p.add_argument("--link-base", metavar="URL",
                       help="the repository's web URL (https://github.com/owner/repo): every path:line becomes a "
                            "permalink to the head commit (default: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY)")
    else:
        p.add_argument("--base", required=True, help="full 40-hex id of the base commit")
        p.add_argument("--patch", required=True, help="the patch (git diff format): a file, a pipe, or - for standard input; read once")
    p.add_argument("--patch-sha256", metavar="HEX", help="expected SHA-256 of the patch file")
    p.add_argument("--artifact", action="append", default=[], metavar="FILE=HEX", help="a file and its expected SHA-256 (repeatable)")
    p.add_argument("--expect-files", type=int, metavar="N", help="expected number of changed files")
    p.add_argument("--config", metavar="FILE", help="rule configuration (default: reviewer.toml of the base commit)")
    p.add_argument("--expect-prev-id", metavar="UUID", help="snapshot id the patched schema's prevIds must name")
    p.add_argument("--allow-symlinks", action="store_true", help="let the patch create symbolic links")
    p.add_argument("--allow-gitlinks", action="store_true", help="let the patch create gitlinks (submodules)")
    if with_formats:
        p.add_argument("--format", action="append", metavar="FMT[=PATH]",
                       help=f"one of {', '.join(FORMATS)} (default markdown); repeatable, at most one to stdout")
        p.add_argument("--scope", default="changed", choices=("changed", "file", "all"),
                       help="which findings count against the patch. changed (default): a finding located at, or "
                            "related to, a changed line. file: also findings on unchanged lines of changed files "
                            "(only what the families examined: bounded-scan judges every query of a changed "
                            "scan-path file and terminal-commit-order every call of a function the patch touched; "
                            "lease-renewal judges only changed constructs and schema-prev-ids reports only defects "
                            "the patch introduces, so for them file is changed). all: every finding, and "
                            "lease-renewal and terminal-commit-order also examine unchanged files that use their idioms. Findings outside the scope are listed as "
                            "pre-existing, never blocking; see docs/usage.md")


def _add_state(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state-dir", metavar="DIR", help="where reviews are remembered (default: <user cache>/.reviewer)")
    p.add_argument("--fresh", action="store_true", help="review again even if this exact review is stored")
    p.add_argument("--no-state", action="store_true", help="neither read nor write stored reviews")
    p.add_argument("--previous", metavar="REPORT.json", help="a previous JSON report: add a delta section")
    p.add_argument("--repo-id", metavar="NAME",
                   help="how stored reviews name this repository (default: its git directory's path); "
                        "CI that fetches into a new directory every run names it, e.g. owner/name")
    p.add_argument("--state-untrusted", action="store_true",
                   help="the state directory may have been written by someone else (e.g. restored from a CI cache): "
                        "never replay a stored verdict; review the previous version again from git objects for the delta")
    _add_cache(p)


def _add_cache(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache-dir", metavar="DIR",
                   help="where facts about base trees and rule results for identical changes are kept and reused "
                        "(default: $REVIEWER_CACHE_DIR, else <user cache>/reviewer; safe to delete)")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the cache (CI whose home directory earlier steps could write)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="reviewer", description="Review a patch to a crash-safe service: MERGE or DO-NOT-MERGE.")
    parser.add_argument("--version", action="version", version=f"reviewer {__version__} (rules {RULESET_VERSION})")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    review_p = sub.add_parser("review", help="integrity gate, reconstruction, rules, report")
    _add_inputs(review_p)
    _add_state(review_p)
    _add_inputs(sub.add_parser("verify", help="integrity gate only: GATE PASSED or GATE FAILED, never a verdict"))
    pr_p = sub.add_parser("pr", help="review merge-base(base, head)..head of a pull request")
    _add_inputs(pr_p, pr=True)
    _add_state(pr_p)
    diff = sub.add_parser("diff", help="the delta between two JSON reports: resolved, new, still open")
    diff.add_argument("old", metavar="OLD.json")
    diff.add_argument("new", metavar="NEW.json")
    diff.add_argument("--format", default="markdown", choices=("markdown", "json"),
                      help="markdown (default) or json (a reviewer-delta/1 object)")
    history = sub.add_parser("history", help="stored reviews of a repository, oldest first")
    history.add_argument("--repo", required=True)
    history.add_argument("--state-dir", metavar="DIR")
    history.add_argument("--repo-id", metavar="NAME", help="the name the reviews were stored under (see review --repo-id)")
    rec = sub.add_parser("reconstruct", help="write every patched file under --out")
    _add_inputs(rec, with_formats=False)
    rec.add_argument("--out", required=True, help="directory to write the patched files into")
    rules = sub.add_parser("rules", help="list rule ids, default severities and summaries")
    rules.add_argument("--explain", metavar="ID", help="what a rule checks, why, and a bad and a good example")
    rules.add_argument("--markdown", action="store_true", help="the full rules reference in Markdown (as in the README)")
    init = sub.add_parser("init", help="propose a reviewer.toml from the code base's own names, with evidence")
    init.add_argument("--repo", required=True, help="git repository (checkout or bare); never modified")
    init.add_argument("--base", default="HEAD", help="commit (or ref) whose tree is read (default: HEAD)")
    init.add_argument("--config", metavar="FILE", help="start from this configuration instead of reviewer.toml at --base")
    _add_cache(init)
    from reviewer.sweep.command import configure as configure_sweep

    configure_sweep(sub.add_parser("sweep", help="review every commit of a range against its parent (history audit)"))
    demo = sub.add_parser("demo", help="review the shipped sample end to end")
    demo.add_argument("--sample", default="session-recovery", help="sample name (default: session-recovery)")
    demo.add_argument("--patch-name", default="v5", help="which of the sample's patches (default: v5)")
    demo.add_argument("--format", action="append", metavar="FMT[=PATH]")
    return parser


def _request(args: argparse.Namespace, **changes):
    from reviewer.review import Request

    overrides = {"expect_prev_id": args.expect_prev_id} if getattr(args, "expect_prev_id", None) else {}
    fields = dict(
        repo=args.repo, base=args.base, patch=getattr(args, "patch", ""), patch_sha256=args.patch_sha256,
        artifacts=tuple(args.artifact), expect_files=args.expect_files, config=args.config, overrides=overrides,
        scope=getattr(args, "scope", "changed"),
        allow_symlinks=args.allow_symlinks, allow_gitlinks=args.allow_gitlinks,
        cache_dir=_cache_dir(args),
        repo_id=getattr(args, "repo_id", None),
    )
    fields.update(changes)
    return Request(**fields)


def _cache_dir(args: argparse.Namespace) -> str | None:
    if getattr(args, "no_cache", False) or not hasattr(args, "cache_dir"):
        return None
    from reviewer.engine.cache import default_cache_dir

    return args.cache_dir or _env("REVIEWER_CACHE_DIR") or str(default_cache_dir())


def _env(name: str) -> str | None:
    import os

    return os.environ.get(name) or None


def _emit(report, outputs: tuple[Output, ...]) -> None:
    from reviewer.report.formats import renderer

    _write_outputs({out.fmt: renderer(out.fmt)(report) for out in outputs}
                   | ({"markdown": renderer("markdown")(report)} if any(o.fmt == "github" for o in outputs) else {}),
                   outputs)


def _write_outputs(rendered: dict[str, str], outputs: tuple[Output, ...]) -> None:
    import os

    for out in outputs:
        text = rendered[out.fmt]
        if out.fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
            _append_step_summary(rendered["markdown"], os.environ["GITHUB_STEP_SUMMARY"])
        if out.path is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            try:
                Path(out.path).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise ReviewerError(f"--format {out.fmt}={out.path}: cannot write ({exc.strerror})") from None


def _append_step_summary(markdown: str, path: str) -> None:
    from reviewer.report.github import cap_summary

    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(cap_summary(markdown))
    except OSError as exc:
        raise ReviewerError(f"GITHUB_STEP_SUMMARY={path}: cannot write ({exc.strerror})") from None


def _exit_for(report) -> int:
    from reviewer.report.model import Verdict

    return EXIT_MERGE if report.verdict is Verdict.MERGE else EXIT_BLOCK


def cmd_review(args: argparse.Namespace) -> int:
    return _stateful(args, _request(args), parse_formats(args.format))


def cmd_verify(args: argparse.Namespace) -> int:
    """The integrity gate alone: its own result and exit status (0 passed, 1 failed), never MERGE."""
    from reviewer import review
    from reviewer.report import gate

    outputs = parse_formats(args.format)
    for out in outputs:
        gate.refuse(out.fmt)  # before any work: a refused format is a usage error
    report = review.run(_request(args), gate_only=True).report
    wanted = {out.fmt for out in outputs} | ({"markdown"} if any(o.fmt == "github" for o in outputs) else set())
    _write_outputs({fmt: gate.renderer(fmt)(report) for fmt in wanted}, outputs)
    return EXIT_MERGE if gate.passed(report) else EXIT_BLOCK


def _store(args: argparse.Namespace):
    """The state store the arguments name, or None; an untrusted one only if its layout is sound."""
    from reviewer.state.store import StateStore, default_state_dir
    from reviewer.state.trust import layout_problem

    if args.no_state:
        return None
    store = StateStore(Path(args.state_dir) if args.state_dir else default_state_dir())
    problem = layout_problem(store) if args.state_untrusted else None
    if problem is not None:
        print(f"reviewer: note: the untrusted state directory is not used ({problem}): reviewing without stored state",
              file=sys.stderr)
        return None
    return store


_UNSET = object()


def _stateful(args: argparse.Namespace, req, outputs: tuple[Output, ...], previous=None, store=_UNSET) -> int:
    from reviewer.state.delta import load_report
    from reviewer.state.stored import review_with_state

    if previous is None and args.previous:
        previous = load_report(args.previous)
    store = _store(args) if store is _UNSET else store
    wanted = {out.fmt for out in outputs} | ({"markdown"} if any(o.fmt == "github" for o in outputs) else set())
    result = review_with_state(req, store, args.fresh, previous, wanted, untrusted=args.state_untrusted)
    if result.rerun:
        print(f"reviewer: re-run: review {result.key[:16]} is stored with identical inputs; "
              "printing it unchanged (--fresh to review again)", file=sys.stderr)
    _write_outputs(dict(result.outputs), outputs)
    return EXIT_MERGE if result.verdict == "MERGE" else EXIT_BLOCK


def cmd_pr(args: argparse.Namespace) -> int:
    import os

    from reviewer import review
    from reviewer.inputs.pullrequest import check_number, event_number, permalinks, pull_request_patch, web_url

    outputs = parse_formats(args.format)
    # Every input that can be wrong is checked before git runs.
    number = check_number(args.pr) if args.pr is not None else event_number(os.environ)
    if args.link_base is not None:
        web_url(args.link_base, "--link-base")
    with tempfile.TemporaryDirectory(prefix="reviewer-pr-") as tmp:
        pr, patch_path = pull_request_patch(args.repo, args.base, args.head, Path(tmp), number)
        links = permalinks(args.link_base, pr.head, os.environ)
        if patch_path is None:
            report = review.empty_report(_request(args, base=pr.merge_base, pull_request=pr, links=links))
            _emit(report, outputs)
            return _exit_for(report)
        if pr.number is None and pr.head_branch is None and not args.no_state and args.previous is None:
            from reviewer.display import printable

            print(f"reviewer: note: no delta: --head {printable(args.head)} is not a branch and no pull request "
                  "number is known (--pr N, or GITHUB_EVENT_PATH), so this version is not compared with earlier ones",
                  file=sys.stderr)
        req = _request(args, base=pr.merge_base, patch=str(patch_path), pull_request=pr, config_commit=pr.base, links=links)
        previous, store = None, _UNSET
        if args.state_untrusted and args.previous is None:
            store = _store(args)
            if store is not None:
                previous = _recomputed_previous(req, store, patch_path)
        return _stateful(args, req, outputs, previous, store)


def _recomputed_previous(req, store, patch_path: Path):
    """With an untrusted store, the previous version's report as this run computes it."""
    import hashlib

    from reviewer import review
    from reviewer.gitio import open_repo
    from reviewer.report.json_format import to_dict
    from reviewer.state.stored import repo_name
    from reviewer.state.trust import recomputed_previous

    if req.repo_id:
        repo_id = req.repo_id
    else:
        repo = open_repo(req.repo)
        repo_id = repo_name(req, repo)
        repo.close()
    sha = hashlib.sha256(patch_path.read_bytes()).hexdigest()  # our own file, written by pull_request_patch
    found = recomputed_previous(req, store, repo_id, sha, lambda again: to_dict(review.run(again).report))
    if found.note:
        print(f"reviewer: note: {found.note}", file=sys.stderr)
    return found.report


def cmd_diff(args: argparse.Namespace) -> int:
    from reviewer.state.delta import compare, load_report, render_json

    old, new = load_report(args.old), load_report(args.new)
    if args.format == "json":
        sys.stdout.write(render_json(old, new))
    else:
        from reviewer.report.markdown import render_delta

        sys.stdout.write(render_delta(compare(old, new)))
    return EXIT_MERGE


def cmd_history(args: argparse.Namespace) -> int:
    from reviewer.display import printable
    from reviewer.gitio import open_repo
    from reviewer.state.store import StateStore, default_state_dir, recorded_head, utc_iso

    repo = open_repo(args.repo)
    repo.close()
    store = StateStore(Path(args.state_dir) if args.state_dir else default_state_dir())
    records = store.history(args.repo_id or str(repo.common_dir))
    if not records:
        print(f"no stored reviews of {args.repo} in {store.root}")
        return EXIT_MERGE
    print(f"{'recorded (UTC)':<20}  {'review':<16}  {'verdict':<12}  {'head':<12}  {'base':<12}  "
          f"{'patch sha256':<12}  {'rules':<12}  patch")
    for r in records:
        ident = r.identity
        head = recorded_head(ident) or "-"
        cells = [utc_iso(r.recorded_at), r.key[:16], r.verdict, head[:12], str(ident.get("base"))[:12],
                 str(ident.get("patch_sha256"))[:12], str(ident.get("rules")), str(ident.get("patch_name"))]
        # Everything in a record may have come from a hostile patch or repository.
        cells = [printable(c) for c in cells]
        print(f"{cells[0]:<20}  {cells[1]:<16}  {cells[2]:<12}  {cells[3]:<12}  {cells[4]:<12}  {cells[5]:<12}  "
              f"{cells[6]:<12}  {cells[7]}")
    return EXIT_MERGE


def cmd_reconstruct(args: argparse.Namespace) -> int:
    from reviewer import review
    from reviewer.change.reconstruct import write_patched_files

    out_dir = Path(args.out)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise ReviewerError(f"--out {args.out}: must be a new or empty directory")
    outcome = review.run(_request(args), gate_only=True)
    failed = [c for c in outcome.report.checks if c.status.value == "fail"]
    for c in failed:
        print(f"reviewer: {c.id}: {c.detail}", file=sys.stderr)
    if outcome.changeset is None:
        raise ReviewerError("nothing reconstructed: the patch could not be applied safely")
    written = write_patched_files(outcome.changeset, out_dir)
    print(f"reconstructed {len(written)} file(s) under {out_dir}")
    return EXIT_BLOCK if failed else EXIT_MERGE


def cmd_rules(args: argparse.Namespace) -> int:
    from reviewer.engine.registry import catalog, discover

    families = discover()
    if args.markdown:
        from reviewer.engine.explain import reference

        sys.stdout.write(reference(families))
        return EXIT_MERGE
    if args.explain:
        from reviewer.engine.explain import explain

        sys.stdout.write(explain(families, args.explain))
        return EXIT_MERGE
    # The families (sorted by id, each with its internal-error), then the checks
    # the pipeline raises itself (integrity, suppression), which never run as rules.
    for group in catalog(families):
        for spec in group.checks:
            print(f"{spec.id:<48} {spec.severity.value:<10} {spec.summary}")
    return EXIT_MERGE


def cmd_init(args: argparse.Namespace) -> int:
    from reviewer.init import proposal

    sys.stdout.write(proposal(args.repo, args.base, args.config, cache_dir=_cache_dir(args)))
    return EXIT_MERGE


def cmd_demo(args: argparse.Namespace) -> int:
    from reviewer import review
    from reviewer.demo import load_sample, materialize

    sample = load_sample(args.sample)
    chosen = sample.patch(args.patch_name)
    outputs = parse_formats(args.format)
    with tempfile.TemporaryDirectory(prefix="reviewer-demo-") as tmp:
        git_dir, base = materialize(sample, Path(tmp) / "repo.git")
        patch_path = Path(tmp) / chosen.file
        patch_path.write_bytes(sample.patch_bytes(chosen.name))
        outcome = review.run(
            review.Request(repo=str(git_dir), base=base, patch=str(patch_path),
                           patch_sha256=chosen.sha256, expect_files=chosen.files)
        )
        _emit(outcome.report, outputs)
    return _exit_for(outcome.report)


class Terminated(BaseException):
    """SIGTERM, raised where the process is so every temporary directory unwinds.

    A BaseException, like KeyboardInterrupt, so no `except Exception` in a rule
    wrapper can swallow it.
    """


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    import signal
    import threading

    from reviewer import _stop_early

    on_main_thread = threading.current_thread() is threading.main_thread()
    held = {signal.SIGTERM, signal.SIGINT}
    previous: dict[int, object] = {}
    # Every temporary file of this run lives under one directory, removed at
    # the end with signals held off: a signal that interrupts an inner
    # cleanup can then never leave anything behind.
    if on_main_thread:
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
    previous_tempdir = tempfile.tempdir
    try:
        if on_main_thread:
            previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _on_sigterm)
            # The program's early handler (reviewer/__init__.py) exits on the spot;
            # from here on an interrupt must unwind so the scratch directory goes.
            if signal.getsignal(signal.SIGINT) is _stop_early:
                previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
        scratch = tempfile.mkdtemp(prefix="reviewer-")
    except BaseException:
        # No scratch directory (an unwritable TMPDIR): the caller's handlers and signal mask come back
        # as they were, or a host calling main() would go on with SIGINT and SIGTERM blocked, and so
        # would every process it starts.
        if on_main_thread:
            for signum, handler in previous.items():
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        raise
    tempfile.tempdir = scratch
    try:
        try:
            if on_main_thread:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
            return _dispatch(argv)
        except (KeyboardInterrupt, Terminated) as stop:
            # Caught here, not in _dispatch, so a signal that lands anywhere
            # (even as it is unblocked above) still ends in one line, no traceback.
            if on_main_thread:
                signal.pthread_sigmask(signal.SIG_BLOCK, held)
            word, code = ("interrupted", 130) if isinstance(stop, KeyboardInterrupt) else ("terminated", 143)
            print(f"reviewer: {word}; no verdict", file=sys.stderr)
            return code
    finally:
        if on_main_thread:
            signal.pthread_sigmask(signal.SIG_BLOCK, held)
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
        tempfile.tempdir = previous_tempdir
        if on_main_thread:
            # A signal that arrived during cleanup is moot: the run is over.
            during_run = {signum: signal.signal(signum, signal.SIG_IGN) for signum in held}
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
            for signum, handler in (during_run | previous).items():
                # The early handler belongs to a program whose run is now over:
                # a late signal stays moot instead of claiming "no verdict"
                # after the verdict was written.
                if handler is _stop_early:
                    handler = signal.SIG_IGN
                signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def entry() -> None:
    """The program (`reviewer` and `python -m reviewer`): main(), then out at once.

    A review allocates hundreds of thousands of small objects and few cycles,
    so the collector's default thresholds spend a tenth of a large review
    scanning for garbage that is not there; the imports are frozen out of its
    sight and its first threshold raised. Once main() has returned, every
    temporary file is gone and the report is written: only the output buffers
    are flushed, and the heap is left to the operating system instead of being
    torn down object by object (seconds, on a large review).
    """
    import gc
    import os

    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            # A closed or broken pipe: the output is lost, so the run must not claim it worked.
            code = code or EXIT_ERROR
    os._exit(code)


def _dispatch(argv: Sequence[str] | None) -> int:
    try:
        parser = build_parser()
        if not (sys.argv[1:] if argv is None else argv):
            # A bare `reviewer`: what it can do, then the one error line (exit 2: no command given).
            parser.print_help()
            raise ReviewerError("no command given: choose one of the commands above")
        args = parser.parse_args(argv)
        if args.command == "review":
            return cmd_review(args)
        if args.command == "verify":
            return cmd_verify(args)
        if args.command == "pr":
            return cmd_pr(args)
        if args.command == "diff":
            return cmd_diff(args)
        if args.command == "history":
            return cmd_history(args)
        if args.command == "reconstruct":
            return cmd_reconstruct(args)
        if args.command == "rules":
            return cmd_rules(args)
        if args.command == "init":
            return cmd_init(args)
        if args.command == "sweep":
            from reviewer.sweep.command import run as run_sweep

            return run_sweep(args)
        if args.command == "demo":
            return cmd_demo(args)
        raise ReviewerError(f"unknown command {args.command!r}")
    except ReviewerError as exc:
        print(f"reviewer: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - fail closed, one line, never exit 0
        stop = _interruption_inside(exc)
        if stop is not None:
            # A signal that landed while Python was building a class (a lazy
            # import) arrives wrapped, e.g. in the RuntimeError of __set_name__:
            # it is still an interruption, not an internal error.
            raise stop from None
        print(f"reviewer: internal error, no verdict: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _interruption_inside(exc: BaseException) -> BaseException | None:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, (KeyboardInterrupt, Terminated)):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
