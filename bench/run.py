"""Benchmark: reviewer end to end against git's own floor, on generated repositories.

    python bench/run.py                 # cases a, b, d; 3 runs each (median)
    python bench/run.py --cases a,b,c,d --runs 5

Cases (generated deterministically, cached under bench/.work/):
  a  seed-sized: 33 changed TypeScript files, ~7,000 patch lines, repo of ~3,000 files
  b  300 changed files, repo of ~3,000 files
  c  3,000 changed files, ~200,000 patch lines, repo of ~30,000 files
  e  a 2-file patch to a repo of 16,000 files (and `reviewer init` of that tree)
  d  the shipped samples (session-recovery v5 and v6)

    python bench/run.py --cases a --cache-dir /tmp/reviewer-bench-cache   # + cold/warm cache

The git floor is the work git must do anyway for the same inputs:
read-tree of the base into a temporary index, apply --cached --check,
apply --cached, write-tree, and reading every changed blob with one
cat-file --batch. Everything reviewer adds on top is overhead.
Benchmarks are not tests: nothing here fails on timing.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
IDENT = "bench <bench@reviewer.invalid> 1767225600 +0000"


@dataclass(frozen=True)
class Case:
    name: str
    repo_files: int
    changed: int
    lines_per_change: int


CASES = {
    "a": Case("a: seed-sized", 3_000, 33, 220),
    "b": Case("b: 300 files", 3_000, 300, 70),
    "c": Case("c: 3,000 files", 30_000, 3_000, 67),
    "e": Case("e: 2 files of 16,000", 16_000, 2, 40),
}
# Bump when the generator changes: cached cases under bench/.work/ are rebuilt.
GENERATOR = "4"

HEADER = [
    'import { and, asc, eq, isNull, lte } from "drizzle-orm"',
    'import { Effect, Schedule } from "effect"',
    'import { SessionExecutionClaim } from "../execution/claim"',
    'import { SessionEvent } from "../event"',
    'import { SessionInputTable, SESSION_EXECUTION_LEASE_MS } from "../sql"',
    "",
    "const BATCH_SIZE = 100",
    "",
]


def block(rng: random.Random, i: int, n: int) -> list[str]:
    """One top-level declaration of a plausible Effect-TS / drizzle module,
    with the idioms the rule families look for, so they have real work to do."""
    kind = rng.randrange(5)
    if kind == 0:
        return [
            f"export const scan{i}_{n} = Effect.fn(\"Scan{i}.{n}\")(function* (db: Db, now: number) {{",
            "  const rows = yield* db",
            "    .select()",
            "    .from(SessionInputTable)",
            "    .where(and(lte(SessionInputTable.time_created, now), isNull(SessionInputTable.promoted_seq)))",
            "    .orderBy(asc(SessionInputTable.wake_attempts), asc(SessionInputTable.id))",
            "    .limit(BATCH_SIZE)",
            "    .all()",
            "  return rows.length",
            "})",
        ]
    if kind == 1:
        return [
            f"export const renew{i}_{n} = (db: Db, claim: Claim) =>",
            "  SessionExecutionClaim.renew(db, claim).pipe(",
            "    Effect.repeat(Schedule.spaced(\"10 seconds\")),",
            "    Effect.ensuring(SessionExecutionClaim.clear(db, claim)),",
            "  )",
        ]
    if kind == 2:
        return [
            f"export function helper{i}_{n}(value: number): number {{",
            f"  const scaled = value * {rng.randrange(2, 90)}",
            "  if (scaled > SESSION_EXECUTION_LEASE_MS) return SESSION_EXECUTION_LEASE_MS",
            "  return scaled",
            "}",
        ]
    if kind == 3:
        return [
            f"export const step{i}_{n} = Effect.fn(\"Step{i}.{n}\")(function* (bus: Bus, run: Run) {{",
            "  const result = yield* run.pipe(Effect.catchTag(\"ProviderError\", () => Effect.succeed(null)))",
            "  if (result === null) {",
            f"    yield* bus.publish(SessionEvent.Step.Failed, {{ id: \"{i}.{n}\" }})",
            "  }",
            f"  yield* bus.publish(SessionEvent.Step.Ended, {{ id: \"{i}.{n}\" }})",
            "})",
        ]
    return [f"export const constant{i}_{n} = {rng.randrange(10_000)} // tuning value {n}"]


def ts_blocks(rng: random.Random, i: int, lines: int) -> list[list[str]]:
    blocks: list[list[str]] = []
    total = len(HEADER)
    while total < lines:
        blocks.append(block(rng, i, len(blocks) + 1))
        total += len(blocks[-1]) + 1
    return blocks


def render(blocks: list[list[str]]) -> str:
    return "\n".join(HEADER + [line for b in blocks for line in (*b, "")])


def edit(rng: random.Random, i: int, blocks: list[list[str]], target_lines: int) -> list[list[str]]:
    """About `target_lines` patch lines (added + removed) of valid TypeScript:
    retuned constants (one line out, one in) and new declarations inserted
    between existing ones."""
    out = [list(b) for b in blocks]
    lines = 0
    serial = len(out)
    while lines < target_lines:
        constants = [k for k, b in enumerate(out) if b[0].startswith("export const constant") and "retuned" not in b[0]]
        if constants and rng.randrange(2) == 0:
            k = rng.choice(constants)
            out[k] = [out[k][0].split(" = ")[0] + f" = {rng.randrange(10_000)} // retuned"]
            lines += 2
        else:
            serial += 1
            new = block(rng, i, serial)
            out.insert(rng.randrange(len(out) + 1), new)
            lines += len(new) + 1
    return out
def _blob(data: bytes) -> bytes:
    return b"data %d\n" % len(data) + data + b"\n"


def _path(i: int, session: bool) -> str:
    area = "session" if session else "util"
    return f"packages/core/src/{area}/m{i // 100:03d}/file{i:05d}.ts"


def build_case(case: Case, dest: Path) -> tuple[Path, str, Path]:
    """A bare repository (via fast-import) and a patch; cached by case name."""
    repo = dest / "repo.git"
    patch = dest / "change.patch"
    marker = dest / "base.sha"
    version = dest / "generator"
    if marker.exists() and patch.exists() and version.exists() and version.read_text().strip() == GENERATOR:
        return repo, marker.read_text().strip(), patch
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    rng = random.Random(f"reviewer-bench-{case.name}")
    stride = max(1, case.repo_files // case.changed)
    chosen = set(range(0, case.repo_files, stride)[: case.changed])
    # Changed files, and one in ten of the rest, live under session/: the
    # default scan and hook paths, where rules read every file.
    files = {
        _path(i, i in chosen or i % 10 == 5): (i, ts_blocks(rng, i, 40 + rng.randrange(60)))
        for i in range(case.repo_files)
    }
    changed = sorted(path for path, (i, _) in files.items() if i in chosen)
    stream = bytearray(b"commit refs/heads/main\ncommitter " + IDENT.encode() + b"\n" + _blob(b"base") + b"deleteall\n")
    for path, (_, blocks) in files.items():
        stream += b"M 100644 inline " + path.encode() + b"\n" + _blob(render(blocks).encode())
    stream += b"\ncommit refs/heads/candidate\ncommitter " + IDENT.encode() + b"\n" + _blob(b"candidate") + b"from refs/heads/main\n"
    for path in changed:
        i, blocks = files[path]
        new = render(edit(rng, i, blocks, case.lines_per_change))
        stream += b"M 100644 inline " + path.encode() + b"\n" + _blob(new.encode())
    stream += b"\n"
    subprocess.run(["git", f"--git-dir={repo}", "fast-import", "--quiet"], input=bytes(stream), check=True)
    base = subprocess.run(["git", f"--git-dir={repo}", "rev-parse", "main"], capture_output=True, text=True, check=True).stdout.strip()
    diff = subprocess.run(["git", f"--git-dir={repo}", "diff", "--binary", "--full-index", "main", "candidate"],
                          capture_output=True, check=True).stdout
    patch.write_bytes(diff)
    subprocess.run(["git", f"--git-dir={repo}", "update-ref", "-d", "refs/heads/candidate"], check=True)
    marker.write_text(base + "\n")
    version.write_text(GENERATOR + "\n")
    return repo, base, patch


def sample_cases() -> list[tuple[str, Path, str, Path]]:
    sys.path.insert(0, str(HERE.parent))
    from reviewer.demo import load_sample, materialize

    out = []
    sample = load_sample("session-recovery")
    dest = WORK / "d"
    shutil.rmtree(dest, ignore_errors=True)
    git_dir, base = materialize(sample, dest / "repo.git")
    for p in sample.patches:
        path = dest / p.file
        path.write_bytes(sample.patch_bytes(p.name))
        out.append((f"d: sample {p.name}", git_dir, base, path))
    return out


def git_floor(repo: Path, base: str, patch: Path) -> float:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    with tempfile.TemporaryDirectory() as tmp:
        env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
        env["GIT_OBJECT_DIRECTORY"] = str(Path(tmp) / "objects")
        env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(repo / "objects")
        (Path(tmp) / "objects").mkdir()
        g = ["git", f"--git-dir={repo}"]
        start = time.perf_counter()
        subprocess.run(g + ["read-tree", base], env=env, check=True)
        subprocess.run(g + ["apply", "--cached", "--check", str(patch)], env=env, check=True)
        subprocess.run(g + ["apply", "--cached", str(patch)], env=env, check=True)
        tree = subprocess.run(g + ["write-tree"], env=env, check=True, capture_output=True, text=True).stdout.strip()
        raw = subprocess.run(g + ["diff-tree", "-r", "--raw", "--no-renames", f"{base}^{{tree}}", tree],
                             env=env, check=True, capture_output=True, text=True).stdout
        oids = [line.split()[3] for line in raw.splitlines() if line.startswith(":")]
        subprocess.run(g + ["cat-file", "--batch"], input=("\n".join(o for o in oids if set(o) != {"0"}) + "\n").encode(),
                       env=env, check=True, capture_output=True)
        return time.perf_counter() - start


def reviewer_env() -> dict[str, str]:
    """The environment of a real install: bytecode is written and reused.

    Some sandboxes set PYTHONDONTWRITEBYTECODE, which makes every run
    recompile every module (~0.16 s) and would be charged to the bot.
    PYTHONPATH passes through, so a frozen copy of the package can be timed.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# Measures one command in a process of its own: a launcher this small forks
# it, so the figure is the command's own peak. Forked straight from this
# harness (which may hold a generated 30,000-file case in memory), the child's
# peak RSS would start at the harness's: Linux carries the high-water mark
# across fork and exec.
LAUNCHER = """
import json, os, sys, time
start = time.perf_counter()
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
_, status, usage = os.wait4(pid, 0)
print(json.dumps([time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                  os.waitstatus_to_exitcode(status)]))
"""


def measure(argv: list[str]) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MB, exit code) of `argv` run in a fresh process."""
    import json

    out = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *argv], capture_output=True, text=True,
                         env=reviewer_env(), check=True).stdout
    wall, cpu, peak, code = json.loads(out.splitlines()[-1])
    return wall, cpu, peak, code


def run_reviewer(args: list[str]) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MB of the reviewer process, exit code)."""
    wall, cpu, peak, code = measure([sys.executable, "-m", "reviewer", *args])
    if code not in (0, 1):
        raise SystemExit(f"reviewer {' '.join(args)} failed ({code})")
    return wall, cpu, peak, code


def errored_families(repo: Path, base: str, patch: Path) -> list[str]:
    """Families whose invariant is `error` (untimed run): a capped time is not a fast one."""
    import json

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        run_reviewer(review_args(repo, base, patch, ["--format", f"json={out}"]))
        report = json.loads(out.read_text())
    return [inv["id"] for inv in report["invariants"] if inv["status"] == "error"]


def review_args(repo: Path, base: str, patch: Path, extra: list[str]) -> list[str]:
    # Cold unless a cache is asked for: the default cache would make every run after the first warm.
    cold = [] if "--cache-dir" in extra else ["--no-cache"]
    return ["review", "--repo", str(repo), "--base", base, "--patch", str(patch), "--no-state", *cold, *extra]


def patch_lines(patch: Path) -> int:
    return sum(1 for line in patch.read_bytes().split(b"\n") if line[:1] in (b"+", b"-") and line[:3] not in (b"+++", b"---"))


def _timed(totals: dict[str, float], name: str, fn):
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[name] = totals.get(name, 0.0) + time.perf_counter() - t0

    return wrapper


def phases_in_process(repo: str, base: str, patch: str) -> dict[str, float]:
    """Where one review's wall time goes, by wrapping the pipeline's stages
    (no profiler overhead). Runs in a fresh interpreter: see --phases."""
    import contextlib
    import dataclasses
    import io

    t0 = time.perf_counter()
    totals: dict[str, float] = {}
    import reviewer.cli as cli
    import reviewer.review as review
    import reviewer.state.stored as stored
    from reviewer.typescript import walk as ts_index
    from reviewer.typescript import parse as ts_parse
    from reviewer.typescript import syntax as ts_syntax

    totals["imports (cli, pipeline)"] = time.perf_counter() - t0
    real_discover = review.discover

    def discover(*args, **kwargs):
        families = real_discover(*args, **kwargs)
        return tuple(dataclasses.replace(f, run=_timed(totals, f"rules: {f.id}", f.run)) for f in families)

    review.discover = _timed(totals, "rule modules import (discover)", discover)
    for name, label in (("open_repo", "inputs (open repo)"), ("check_base", "inputs (base)"),
                        ("_load_config", "configuration"), ("read_patch", "read the patch (once)"),
                        ("run_gate", "integrity gate (git apply, write-tree)"),
                        ("build_changeset", "reconstruction (diff, blobs, hunks)"), ("assemble", "assemble report")):
        setattr(review, name, _timed(totals, label, getattr(review, name)))
    ts_parse.Parsers.parse = _timed(totals, "  of which tree-sitter parse", ts_parse.Parsers.parse)
    ts_index.build_index = _timed(totals, "  of which module index", ts_index.build_index)
    if hasattr(ts_syntax, "NormalForms"):  # absent before this change
        ts_syntax.NormalForms._build = _timed(totals, "  of which normal forms (whole files)", ts_syntax.NormalForms._build)
    real_renderer = stored.renderer
    stored.renderer = lambda fmt: _timed(totals, f"render {fmt}", real_renderer(fmt))
    with contextlib.redirect_stdout(io.StringIO()):
        cli.main(["review", "--repo", repo, "--base", base, "--patch", patch, "--no-state", "--no-cache"])
    totals["total in process"] = time.perf_counter() - t0
    return totals


def phases(inputs: list[tuple[str, Path, str, Path]]) -> None:
    import json

    columns = []
    for name, repo, base, patch in inputs:
        run_reviewer(review_args(repo, base, patch, []))  # bytecode
        out = subprocess.run([sys.executable, __file__, "--phases-of", str(repo), base, str(patch)],
                             capture_output=True, text=True, check=True, env=reviewer_env()).stdout
        columns.append((name, json.loads(out)))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=reviewer_env())
    interpreter = time.perf_counter() - start
    names = list(dict.fromkeys(k for _, col in columns for k in col))
    print("| phase | " + " | ".join(name for name, _ in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    print("| python start-up (`python -c pass`) | " + " | ".join(f"{interpreter:.3f}" for _ in columns) + " |")
    for key in names:
        print(f"| {key} | " + " | ".join(f"{col.get(key, 0.0):.3f}" for _, col in columns) + " |")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--phases-of":
        import json

        print(json.dumps(phases_in_process(*sys.argv[2:])))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="a,b,d")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--phases", action="store_true", help="instead: where the time of one review goes, per case")
    parser.add_argument("--cache-dir", help="also measure cold vs warm outcome cache (--cache-dir) on the first case")
    opts = parser.parse_args()
    wanted = opts.cases.split(",")
    inputs: list[tuple[str, Path, str, Path]] = []
    for key in ("a", "b", "c", "e"):
        if key in wanted:
            t0 = time.perf_counter()
            repo, base, patch = build_case(CASES[key], WORK / key)
            print(f"# {CASES[key].name}: ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
            inputs.append((CASES[key].name, repo, base, patch))
    if "d" in wanted:
        inputs += sample_cases()

    if opts.phases:
        phases(inputs)
        return
    if inputs:
        # Untimed: writes the bytecode of every module a review imports.
        name, repo, base, patch = inputs[0]
        run_reviewer(review_args(repo, base, patch, []))

    print("| case | patch lines | git floor (s) | reviewer (s) | ratio | overhead (s) | reviewer CPU (s) | peak MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    scaling: list[tuple[int, float]] = []
    measured: dict[str, tuple[float, float, float]] = {}
    notes: list[str] = []
    for name, repo, base, patch in inputs:
        floors = [git_floor(repo, base, patch) for _ in range(opts.runs)]
        runs = [run_reviewer(review_args(repo, base, patch, [])) for _ in range(opts.runs)]
        floor = statistics.median(floors)
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        peak = max(r[2] for r in runs)
        lines = patch_lines(patch)
        errored = errored_families(repo, base, patch)
        if errored:
            notes.append(f"{name}: {', '.join(errored)} stopped with an error (e.g. over its time budget, "
                         "limits.rule_seconds): the review failed closed and the time is capped")
        measured[name[0]] = (floor, wall, peak)
        if name[0] in "abc":
            scaling.append((lines, wall))
        print(f"| {name} | {lines:,} | {floor:.3f} | {wall:.3f} | {wall / floor:.2f} | {wall - floor:.3f} | {cpu:.3f} | {peak:.0f} |")
    for note in notes:
        print(f"\nnote: {note}")
    slope = None
    if len(scaling) >= 2:
        xs = [math.log(x) for x, _ in scaling]
        ys = [math.log(y) for _, y in scaling]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print(f"\nscaling exponent (wall time vs patch lines, log-log fit over {len(scaling)} cases): {slope:.2f}")
    starts: dict[str, float] = {}
    for args in (["--help"], ["rules"]):
        times = []
        for _ in range(opts.runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "reviewer", *args], capture_output=True, check=True, env=reviewer_env())
            times.append(time.perf_counter() - t0)
        starts[" ".join(args)] = statistics.median(times)
    inits: dict[str, tuple[float, float]] = {}
    for name, repo, base, _ in inputs:
        if name.startswith("e"):
            with tempfile.TemporaryDirectory() as tmp:
                init = ["init", "--repo", str(repo), "--base", base, "--cache-dir", tmp]
                cold = run_reviewer(init)[0]
                inits[name] = (cold, run_reviewer(init)[0])
            print(f"\n`reviewer init` of {name}'s base tree: cold {inits[name][0]:.3f}s, warm {inits[name][1]:.3f}s")
    print("\nstart-up: " + ", ".join(f"`reviewer {k}` {v:.3f}s" for k, v in starts.items()))
    speedup = None
    if opts.cache_dir and inputs:
        name, repo, base, patch = inputs[0]
        colds, warms = [], []
        for _ in range(opts.runs):
            shutil.rmtree(opts.cache_dir, ignore_errors=True)
            colds.append(run_reviewer(review_args(repo, base, patch, ["--cache-dir", opts.cache_dir]))[0])
            warms.append(run_reviewer(review_args(repo, base, patch, ["--cache-dir", opts.cache_dir]))[0])
        cold, warm = statistics.median(colds), statistics.median(warms)
        speedup = cold / warm
        print(f"\noutcome cache on {name}: cold {cold:.3f}s, warm {warm:.3f}s ({speedup:.1f}x)")
    print("\n" + "\n".join(targets(measured, slope, starts, speedup, inits)))


def targets(measured: dict[str, tuple[float, float, float]], slope: float | None, starts: dict[str, float],
            speedup: float | None, inits: dict[str, tuple[float, float]]) -> list[str]:
    """Issues 6, 15 and 27's targets, informational only: benchmarks never fail a build."""
    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    out = ["targets (issues 6, 15 and 27):"]
    if "a" in measured:
        floor, wall, peak = measured["a"]
        out.append(f"- (a) wall {wall:.3f}s <= 1.5 s (issue 27): {verdict(wall <= 1.5)}")
        bound = 1.5 * floor + 0.5
        out.append(f"- (a) wall {wall:.3f}s <= 1.5 x floor + 0.5 = {bound:.3f}s: {verdict(wall <= bound)}; "
                   f"< 2 s: {verdict(wall < 2)}; peak {peak:.0f} MB < 300 MB: {verdict(peak < 300)}")
    if "c" in measured:
        floor, wall, peak = measured["c"]
        per_file = peak / CASES["c"].changed
        out.append(f"- (c) peak {peak:.0f} MB < 1.5 GB: {verdict(peak < 1536)}")
        out.append(f"- (c) wall {wall:.1f}s <= 25 x floor ({25 * floor:.1f}s; ratio {wall / floor:.0f}): "
                   f"{verdict(wall <= 25 * floor)}; {per_file:.2f} MB per changed file <= 0.3 (issue 27; 0.25, issue 15): "
                   f"{verdict(per_file <= 0.3)}")
    if "e" in measured:
        floor, wall, _ = measured["e"]
        out.append(f"- (e) wall {wall:.3f}s <= 5 x floor ({5 * floor:.3f}s; ratio {wall / floor:.1f}): "
                   f"{verdict(wall <= 5 * floor)}")
    for name, (cold, warm) in inits.items():
        out.append(f"- ({name[0]}) `reviewer init` cold {cold:.3f}s <= 10 s: {verdict(cold <= 10)} (warm {warm:.3f}s)")
    if slope is not None:
        out.append(f"- scaling exponent {slope:.2f} <= 1 (no worse than linear): {verdict(slope <= 1.0)}")
    for command, seconds in starts.items():
        out.append(f"- `reviewer {command}` {seconds:.3f}s < 0.3 s: {verdict(seconds < 0.3)}")
    if speedup is not None:
        out.append(f"- warm cache {speedup:.1f}x faster than cold >= 3x: {verdict(speedup >= 3)}")
    return out


if __name__ == "__main__":
    main()
