"""Benchmark: hostile deep shapes must cost time and memory linear in their size.

    .venv/bin/python bench/pathological.py                       # every shape, default sizes
    .venv/bin/python bench/pathological.py --shapes pipe-chain --sizes 1000,2000,4000,8000,16000
    .venv/bin/python bench/pathological.py --max-mem-mb 6000 --timeout 300 --json /tmp/p.json

Each input is one patch adding one file to a one-file base, built
deterministically (cached by content) into a real git repository under
bench/.work/pathological/. `pipe-chain` is the reported case as reported
(`src/chain.ts`); every other TypeScript shape is "armed": it sits at
packages/core/src/session/recovery.ts and imports the lease constant, so
every family reads it and walks the deep structure instead of skipping the
file. `suppression` is one line `// reviewer-ignore: a`, N spaces, `x` (in a
.txt file: such a line may exceed max_line_length, which for TypeScript fails
the limits gate before anything is parsed). Every size is reviewed by the
CLI in a fresh subprocess,

    python -m reviewer review --repo R --base B --patch P --no-state --format json=<report>

and the table gives wall time, peak RSS (ru_maxrss of the child, via
wait4) and the exit status, with the families left `error` (a rule that
raised or overran its budget: no review of that family) after it. Then the
log-log slope of time and of memory against the input's size in bytes
(1 = linear, 2 = quadratic), over the rows that concluded; memory is taken
above the peak RSS of a one-link pipe chain, so the interpreter and grammar
do not flatten the slope. Each child runs under RLIMIT_AS (`--max-mem-mb`)
and a timeout so a regression cannot take the machine down: such a row
reads `killed`/`timeout`, and the shape's larger sizes are `skipped`.

Benchmarks are not tests: nothing here fails on timing (tests/test_pathological.py
reviews the same shapes and bounds the growth of the work by counting it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work" / "pathological"
IDENT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@reviewer.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@reviewer.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
HEAD = 'import { Effect, pipe } from "effect"\n'
# Every shape but the reported one is "armed": it sits where every family
# looks (recovery, scan, hook and lease paths) and imports what makes each
# family read it, so the rules walk the deep structure rather than skip it.
ARMED = "packages/core/src/session/recovery.ts"
ARMED_HEAD = (
    'import { Effect, pipe } from "effect"\n'
    'import { SessionExecutionClaim } from "./execution/claim"\n'
    'import { SESSION_EXECUTION_LEASE_MS, SessionInputTable } from "./sql"\n'
    "declare const db: any\n"
    "declare const claim: any\n"
    'export const safe = { phase: "safe" }\n'
)


# ------------------------------------------------------------------ shapes
# Each builder returns (path, content) of the one file the patch adds. One
# link per line: max_line_length (100,000) is never the limit that bites.


def pipe_chain(n: int) -> tuple[str, str]:
    """`Effect.succeed(1).pipe(Effect.orDie).pipe(Effect.orDie)...` (the reported case)."""
    return "src/chain.ts", HEAD + "export const x = Effect.succeed(1)\n" + "  .pipe(Effect.orDie)\n" * n + "\n"


def nested_calls(n: int) -> tuple[str, str]:
    """`f(f(f(...f(1)...)))`."""
    return ARMED, ARMED_HEAD + "const f = (v: number) => v\nexport const x =\n" + "  f(\n" * n + "1" + ")" * n + "\n"


def member_chain(n: int) -> tuple[str, str]:
    """`a.b.b.b...b` (a property read, no calls)."""
    return ARMED, ARMED_HEAD + "const a: any = {}\nexport const x = a\n" + "  .b\n" * n + "\n"


def fluent_calls(n: int) -> tuple[str, str]:
    """`db.select().from(t).where(w)...`: a fluent chain of method calls."""
    return ARMED, ARMED_HEAD + "export const x = db\n" + "  .next(1)\n" * n + "\n"


def binary(n: int) -> tuple[str, str]:
    """`1 + 1 + ... + 1` (left-deep binary expression)."""
    return ARMED, ARMED_HEAD + "export const x =\n  1\n" + "  + 1\n" * n + "\n"


def pipe_args(n: int) -> tuple[str, str]:
    """`pipe(x, f, f, ..., f)`: one call with n arguments."""
    return ARMED, ARMED_HEAD + "export const x = pipe(\n  Effect.succeed(1),\n" + "  Effect.orDie,\n" * n + ")\n"


def pipe_calls(n: int) -> tuple[str, str]:
    """`pipe(x, Effect.tap(() => Effect.void), ...)`: n stage calls, each with a callback."""
    stage = "  Effect.catchAll(() => Effect.void),\n"
    return ARMED, ARMED_HEAD + "export const x = pipe(\n  Effect.succeed(1),\n" + stage * n + ")\n"


def nested_arrows(n: int) -> tuple[str, str]:
    """`() => () => ... => 1`."""
    return ARMED, ARMED_HEAD + "export const x =\n" + "  () =>\n" * n + "  1\n"


def nested_gen(n: int) -> tuple[str, str]:
    """`Effect.gen(function* () { yield* Effect.gen(function* () { ... }) })`."""
    open_ = "yield* Effect.gen(function* () {\n"
    return (
        ARMED,
        ARMED_HEAD + "export const x = Effect.gen(function* () {\n" + open_ * n + "yield* Effect.void\n" + "})\n" * (n + 1),
    )


def else_if(n: int) -> tuple[str, str]:
    """`if (v === 0) {..} else if (v === 1) {..} ...` inside an Effect.gen body."""
    body = "".join(f"  }} else if (v === {i}) {{\n    yield* Effect.log({i})\n" for i in range(1, n + 1))
    return (
        ARMED,
        ARMED_HEAD
        + "export const x = (v: number) => Effect.gen(function* () {\n  if (v === 0) {\n    yield* Effect.log(0)\n"
        + body
        + "  }\n})\n",
    )


def nested_blocks(n: int) -> tuple[str, str]:
    """`{ { { ... } } }`: nested statement blocks with an if in each."""
    return (
        ARMED,
        ARMED_HEAD + "export function x(v: number) {\n" + "if (v) {\n" * n + "return Effect.void\n" + "}\n" * n + "}\n",
    )


def lost_chain(n: int) -> tuple[str, str]:
    """A renewal with n catch-everything stages, each swallowing Lost (n findings)."""
    stage = "  .pipe(Effect.catchAll(() => Effect.void))\n"
    return ARMED, ARMED_HEAD + "export const x = SessionExecutionClaim.renew(db, claim)\n" + stage * n + "\n"


def scan_chain(n: int) -> tuple[str, str]:
    """A drizzle scan over a watched table with n `.where(..)` links."""
    link = "  .where(eq(SessionInputTable.id, 1))\n"
    return (
        ARMED,
        ARMED_HEAD + "export const x = db.select().from(SessionInputTable)\n" + link * n + "  .limit(10)\n",
    )


def handler_else_if(n: int) -> tuple[str, str]:
    """A catch-everything handler on a renewal, its body an n-branch `if/else if` chain."""
    branches = "".join(f'  else if (e._tag === "T{i}") return Effect.void\n' for i in range(1, n + 1))
    return (
        ARMED,
        ARMED_HEAD
        + "export const x = SessionExecutionClaim.renew(db, claim).pipe(Effect.catchAll((e: any) => {\n"
        + '  if (e._tag === "T0") return Effect.void\n'
        + branches
        + "  return Effect.fail(e)\n}))\n",
    )


def handler_ternary(n: int) -> tuple[str, str]:
    """A catch-everything handler on a renewal returning an n-deep `c ? a : c ? a : ...`."""
    return (
        ARMED,
        ARMED_HEAD
        + "export const x = SessionExecutionClaim.renew(db, claim).pipe(Effect.catchAll((e: any) =>\n"
        + '  e._tag === "A" ? Effect.fail(e) :\n' * n
        + "  Effect.fail(e)))\n",
    )


def handler_or(n: int) -> tuple[str, str]:
    """A catch-everything handler on a renewal testing an n-term `||` condition."""
    return (
        ARMED,
        ARMED_HEAD
        + "export const x = SessionExecutionClaim.renew(db, claim).pipe(Effect.catchAll((e: any) => {\n"
        + "  if (\n"
        + '    e._tag === "A" ||\n' * n
        + '    e._tag === "B") return Effect.void\n'
        + "  return Effect.fail(e)\n}))\n",
    )


def nested_namespaces(n: int) -> tuple[str, str]:
    """`namespace N { namespace N { ... } }` with a call at the bottom."""
    return (
        ARMED,
        ARMED_HEAD + "namespace N {\n" * n + "export const x = SessionExecutionClaim.renew(db, claim)\n" + "}\n" * n,
    )


def nested_objects(n: int) -> tuple[str, str]:
    """`{ a: { a: { ... } } }`."""
    return ARMED, ARMED_HEAD + "export const x =\n" + "  { a:\n" * n + "  1\n" + "}" * n + "\n"


def nested_templates(n: int) -> tuple[str, str]:
    """`f(`${f(`${...}`)}`)`: calls nested through template literals."""
    return (
        ARMED,
        ARMED_HEAD + "const f = (v: unknown) => v\nexport const x =\n" + "  f(`${\n" * n + "1" + "}`)" * n + "\n",
    )


def nested_parens(n: int) -> tuple[str, str]:
    """`((((x))))` around a renewal."""
    return ARMED, ARMED_HEAD + "export const x =\n" + "  (\n" * n + "SessionExecutionClaim.renew(db, claim)" + ")" * n + "\n"


def one_line_chain(n: int) -> tuple[str, str]:
    """The reported chain on one line per 5,000 links (max_line_length is 100,000)."""
    lines = []
    for start in range(0, n, 5_000):
        lines.append(".pipe(Effect.orDie)" * min(5_000, n - start))
    return ARMED, ARMED_HEAD + "export const x = Effect.succeed(1)\n" + "\n".join(lines) + "\n"


def hook_nested_gen(n: int) -> tuple[str, str]:
    """An `interruptedCommit` hook whose body nests n Effect.gen blocks, each calling a helper."""
    open_ = "  yield* helper()\n  yield* Effect.gen(function* () {\n"
    return (
        ARMED,
        ARMED_HEAD
        + "const helper = () => Effect.void\n"
        + "export const p = publish(events, { interruptedCommit: () => Effect.gen(function* () {\n"
        + open_ * n
        + "  yield* SessionExecutionClaim.clear(db, claim)\n"
        + "  })\n" * n
        + "}) })\n",
    )


def nested_handlers(n: int) -> tuple[str, str]:
    """`Effect.catchAll(() => Effect.catchAll(() => ...))`: n nested failure-handler regions."""
    return (
        ARMED,
        ARMED_HEAD + "export const x = SessionExecutionClaim.renew(db, claim).pipe(\n"
        + "  Effect.catchAll(() =>\n" * n + "  Effect.void" + ")" * n + ")\n",
    )


def nested_renewals(n: int) -> tuple[str, str]:
    """`renew().pipe(Effect.catchAll(() => renew().pipe(Effect.catchAll(() => ...))))`: n nested
    handlers, each on a renewal, so each is judged (does it fail again, can it succeed)."""
    return (
        ARMED,
        ARMED_HEAD + "export const x =\n"
        + "  SessionExecutionClaim.renew(db, claim).pipe(Effect.catchAll(() =>\n" * n
        + "  Effect.void" + "))" * n + "\n",
    )


def cast_chain(n: int) -> tuple[str, str]:
    """`((db.select() as any).select() as any).select() ...`: a fluent chain with a cast at every link
    (a cast hides a link from the call below it, so no two links see the same chain)."""
    return ARMED, ARMED_HEAD + "export const x =\n" + "(" * n + "db.select()\n" + "  as any).select()\n" * n


def recovery_else_if(n: int) -> tuple[str, str]:
    """Startup recovery releasing claims in each branch of an n-branch `if / else if` on the phase."""
    branches = "".join(
        f'  }} else if (row.phase === "p{i}") {{\n    yield* SessionExecutionClaim.clear(db, row)\n' for i in range(1, n + 1)
    )
    return (
        ARMED,
        ARMED_HEAD
        + "export const recover = Effect.fn(\"recover\")(function* (row: any) {\n"
        + '  if (row.phase === "safe") {\n    yield* SessionExecutionClaim.clear(db, row)\n'
        + branches
        + "  }\n})\n",
    )


def suppression(n: int) -> tuple[str, str]:
    """One line `// reviewer-ignore: a` + n spaces + `x` (the suppression-comment parser).

    In a `.txt` file: the line may be longer than max_line_length, which for a
    TypeScript file would fail the limits gate before anything is parsed.
    """
    return "notes/suppress.txt", "// reviewer-ignore: a" + " " * n + "x\n"


SHAPES: dict[str, tuple[Callable[[int], tuple[str, str]], list[int]]] = {
    "pipe-chain": (pipe_chain, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-calls": (nested_calls, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "member-chain": (member_chain, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "fluent-calls": (fluent_calls, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "binary": (binary, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "pipe-args": (pipe_args, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "pipe-calls": (pipe_calls, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-arrows": (nested_arrows, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-gen": (nested_gen, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "else-if": (else_if, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-blocks": (nested_blocks, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "lost-chain": (lost_chain, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "scan-chain": (scan_chain, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "handler-else-if": (handler_else_if, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "handler-ternary": (handler_ternary, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "handler-or": (handler_or, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-namespaces": (nested_namespaces, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-objects": (nested_objects, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-templates": (nested_templates, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-parens": (nested_parens, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "one-line-chain": (one_line_chain, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "hook-nested-gen": (hook_nested_gen, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-handlers": (nested_handlers, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "nested-renewals": (nested_renewals, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "cast-chain": (cast_chain, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "recovery-else-if": (recovery_else_if, [1_000, 2_000, 4_000, 8_000, 16_000]),
    "suppression": (suppression, [2_000, 20_000, 50_000, 100_000, 200_000]),
}
BASE = {"src/a.ts": "export const a = 1\n"}


# ------------------------------------------------------------------ git


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENT_ENV)
    proc = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True, env=env, check=True)
    return proc.stdout.decode().strip()


def build(shape: str, n: int) -> tuple[Path, str, Path, int]:
    """(repo, base sha, patch path, size of the added file in bytes); cached by content."""
    make = SHAPES[shape][0]
    path, content = make(n)
    where = WORK / f"{shape}-{n}"
    stamp = where / "content.sha"
    import hashlib

    digest = hashlib.sha256(f"{path}\0{content}".encode()).hexdigest()
    patch = where / "change.patch"
    if stamp.exists() and stamp.read_text() == digest and patch.exists():
        base = (where / "base.sha").read_text()
        return where / "repo", base, patch, len(content.encode())
    shutil.rmtree(where, ignore_errors=True)
    repo = where / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for rel, text in BASE.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(content)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "candidate")
    head = _git(repo, "rev-parse", "HEAD")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENT_ENV)
    diff = subprocess.run(
        ["git", "diff", "--binary", "--full-index", base, head], cwd=repo, capture_output=True, env=env, check=True
    ).stdout
    _git(repo, "reset", "-q", "--hard", base)
    patch.write_bytes(diff)
    (where / "base.sha").write_text(base)
    stamp.write_text(digest)
    return repo, base, patch, len(content.encode())


# ------------------------------------------------------------------ running


def run_review(repo: Path, base: str, patch: Path, max_mem_mb: int, timeout: float) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB of the child, exit status or 'timeout'/'killed').

    An exit status of 1 is followed by the families whose invariant is
    `error` (a rule that raised or overran its budget: the review did not
    check that family, even though it produced a report).
    """
    limit = max_mem_mb * 1024 * 1024

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    report = WORK / "report.json"
    report.unlink(missing_ok=True)
    cmd = [
        sys.executable, "-m", "reviewer", "review", "--repo", str(repo), "--base", base, "--patch", str(patch),
        "--no-state", "--format", f"json={report}",
    ]  # fmt: skip
    # Reaped with wait4() here, not by Popen: the child's own rusage (peak RSS)
    # comes back with its exit status, whatever ran before it.
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=cap)
        status = ""
        while True:
            pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if time.perf_counter() - start > timeout:
                proc.kill()
                pid, code, usage = os.wait4(proc.pid, 0)
                status = "timeout"
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(code)  # already reaped: keep Popen from waiting again
        err.seek(0)
        stderr = err.read()
    rss = usage.ru_maxrss / 1024
    if not status:
        rc = proc.returncode
        status = "killed" if rc < 0 or b"MemoryError" in stderr else str(rc)
        if rc == 1 and report.exists():
            errors = [i["id"] for i in json.loads(report.read_text())["invariants"] if i["status"] == "error"]
            if errors:
                status += " error: " + ",".join(errors)
    return wall, rss, status


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y on log x."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0 and math.isfinite(y)]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: " + ", ".join(SHAPES))
    parser.add_argument("--sizes", default="", help="comma-separated link counts (default: per shape)")
    parser.add_argument("--max-mem-mb", type=int, default=8_000, help="RLIMIT_AS of each review (default 8000)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per review (default 600)")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--json", metavar="FILE", help="also write every row (and the slopes) as JSON")
    args = parser.parse_args(argv)

    # The floor: an empty change reviewed the same way (interpreter, grammar, git).
    repo, base, patch, _ = build("pipe-chain", 1)
    floor_t, floor_m, _ = run_review(repo, base, patch, args.max_mem_mb, args.timeout)
    print(f"baseline (1-link pipe chain): {floor_t:.2f} s, {floor_m:.0f} MB peak RSS\n")

    summary = []
    for shape in [s.strip() for s in args.shapes.split(",") if s.strip()]:
        if shape not in SHAPES:
            parser.error(f"unknown shape {shape!r}")
        sizes = [int(s) for s in args.sizes.split(",") if s] or SHAPES[shape][1]
        rows = []
        for n in sizes:
            repo, base, patch, nbytes = build(shape, n)
            if rows and rows[-1][4] in ("timeout", "killed", "skipped"):
                # a larger input would only time out or run out of memory again
                rows.append((n, nbytes, float("nan"), float("nan"), "skipped"))
                continue
            wall, rss, status = run_review(repo, base, patch, args.max_mem_mb, args.timeout)
            rows.append((n, nbytes, wall, rss, status))
        ok = [r for r in rows if r[4] in ("0", "1")]  # reviewed, every family concluded
        t_slope = slope([r[1] for r in ok], [r[2] for r in ok])
        m_slope = slope([r[1] for r in ok], [max(r[3] - floor_m, 1.0) for r in ok])
        summary.append((shape, t_slope, m_slope, rows))
        if args.markdown:
            print(f"**{shape}**\n\n| n | bytes | wall s | peak MB | exit |\n|---:|---:|---:|---:|---|")
            for n, nbytes, wall, rss, status in rows:
                print(f"| {n:,} | {nbytes:,} | {wall:.2f} | {rss:.0f} | {status} |")
            print(f"\nslope: time {t_slope:.2f}, memory above baseline {m_slope:.2f}\n")
        else:
            print(f"{shape}")
            print(f"  {'n':>8} {'bytes':>10} {'wall s':>8} {'peak MB':>8} exit")
            for n, nbytes, wall, rss, status in rows:
                print(f"  {n:>8,} {nbytes:>10,} {wall:>8.2f} {rss:>8.0f} {status}")
            print(f"  slope: time {t_slope:.2f}, memory above baseline {m_slope:.2f}\n")
        sys.stdout.flush()
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "baseline": {"wall": floor_t, "peak_mb": floor_m},
                    "shapes": [
                        {
                            "shape": shape,
                            "time_slope": t_slope,
                            "memory_slope": m_slope,
                            "rows": [
                                {"n": n, "bytes": b, "wall": w, "peak_mb": m, "exit": e} for n, b, w, m, e in rows
                            ],
                        }
                        for shape, t_slope, m_slope, rows in summary
                    ],
                },
                indent=1,
            )
        )
    print("shape            time-slope  memory-slope  largest: wall s / peak MB / exit")
    for shape, ts_, ms_, rows in summary:
        n, _, wall, rss, status = rows[-1]
        print(f"{shape:<16} {ts_:>10.2f} {ms_:>13.2f}  {n:,}: {wall:.2f} / {rss:.0f} / {status}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
