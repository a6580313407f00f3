"""Benchmark: reviewer end to end against git's own floor, on generated repositories.

    python bench/run.py                 # cases a, b, d; 3 runs each (median)
    python bench/run.py --cases a,b,c,d --runs 5

Cases (generated deterministically, cached under bench/.work/):
  a  seed-sized: 33 changed TypeScript files, ~7,000 patch lines, repo of ~3,000 files
  b  300 changed files, repo of ~3,000 files
  c  3,000 changed files, ~200,000 patch lines, repo of ~30,000 files
  d  the shipped samples (session-recovery v5 and v6)

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
    "a": Case("a: seed-sized", 3_000, 33, 140),
    "b": Case("b: 300 files", 3_000, 300, 60),
    "c": Case("c: 3,000 files", 30_000, 3_000, 44),
}


def ts_module(rng: random.Random, i: int, lines: int) -> str:
    """A plausible Effect-TS / drizzle module, so rules have real work to do."""
    out = [
        'import { and, asc, eq, isNull, lte } from "drizzle-orm"',
        'import { Effect, Schedule } from "effect"',
        'import { SessionExecutionClaim } from "../execution/claim"',
        'import { SessionInputTable, SESSION_EXECUTION_LEASE_MS } from "../sql"',
        "",
        "const BATCH_SIZE = 100",
        "",
    ]
    n = 0
    while len(out) < lines:
        n += 1
        kind = rng.randrange(4)
        if kind == 0:
            out += [
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
                "",
            ]
        elif kind == 1:
            out += [
                f"export const renew{i}_{n} = (db: Db, claim: Claim) =>",
                "  SessionExecutionClaim.renew(db, claim).pipe(",
                "    Effect.repeat(Schedule.spaced(\"10 seconds\")),",
                "    Effect.ensuring(SessionExecutionClaim.clear(db, claim)),",
                "  )",
                "",
            ]
        elif kind == 2:
            out += [
                f"export function helper{i}_{n}(value: number): number {{",
                f"  const scaled = value * {rng.randrange(2, 90)}",
                "  if (scaled > SESSION_EXECUTION_LEASE_MS) return SESSION_EXECUTION_LEASE_MS",
                "  return scaled",
                "}",
                "",
            ]
        else:
            out += [f"export const constant{i}_{n} = {rng.randrange(10_000)} // tuning value {n}", ""]
    return "\n".join(out[:lines]) + "\n"


def edit(rng: random.Random, text: str, target_lines: int) -> str:
    """Change about `target_lines` lines of a module (the patch lines of one file)."""
    lines = text.splitlines()
    changed = 0
    while changed < target_lines // 2:
        at = rng.randrange(len(lines))
        lines[at] = lines[at].replace("10_000", "20_000") + f" // edited {changed}"
        lines.insert(at + 1, f"export const added{changed} = {rng.randrange(1000)}")
        changed += 1
    return "\n".join(lines) + "\n"


def _blob(data: bytes) -> bytes:
    return b"data %d\n" % len(data) + data + b"\n"


def build_case(case: Case, dest: Path) -> tuple[Path, str, Path]:
    """A bare repository (via fast-import) and a patch; cached by case name."""
    repo = dest / "repo.git"
    patch = dest / "change.patch"
    marker = dest / "base.sha"
    if marker.exists() and patch.exists():
        return repo, marker.read_text().strip(), patch
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    rng = random.Random(f"reviewer-bench-{case.name}")
    files = {f"packages/core/src/mod{i // 100:03d}/file{i:05d}.ts": ts_module(rng, i, 40 + rng.randrange(60)) for i in range(case.repo_files)}
    changed = sorted(files)[:: max(1, case.repo_files // case.changed)][: case.changed]
    stream = bytearray(b"commit refs/heads/main\ncommitter " + IDENT.encode() + b"\n" + _blob(b"base") + b"deleteall\n")
    for path, text in files.items():
        stream += b"M 100644 inline " + path.encode() + b"\n" + _blob(text.encode())
    stream += b"\ncommit refs/heads/candidate\ncommitter " + IDENT.encode() + b"\n" + _blob(b"candidate") + b"from refs/heads/main\n"
    for path in changed:
        new = edit(rng, files[path], case.lines_per_change)
        stream += b"M 100644 inline " + path.encode() + b"\n" + _blob(new.encode())
    stream += b"\n"
    subprocess.run(["git", f"--git-dir={repo}", "fast-import", "--quiet"], input=bytes(stream), check=True)
    base = subprocess.run(["git", f"--git-dir={repo}", "rev-parse", "main"], capture_output=True, text=True, check=True).stdout.strip()
    diff = subprocess.run(["git", f"--git-dir={repo}", "diff", "--binary", "--full-index", "main", "candidate"],
                          capture_output=True, check=True).stdout
    patch.write_bytes(diff)
    subprocess.run(["git", f"--git-dir={repo}", "update-ref", "-d", "refs/heads/candidate"], check=True)
    marker.write_text(base + "\n")
    return repo, base, patch


def sample_cases() -> list[tuple[str, Path, str, Path]]:
    sys.path.insert(0, str(HERE.parent))
    from reviewer.materialize import load_sample, materialize

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


def run_reviewer(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MB of the reviewer process tree, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "reviewer", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"reviewer {' '.join(args)} failed ({code}): {proc.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024, code


def review_args(repo: Path, base: str, patch: Path, extra: list[str]) -> list[str]:
    return ["review", "--repo", str(repo), "--base", base, "--patch", str(patch), "--no-state", *extra]


def patch_lines(patch: Path) -> int:
    return sum(1 for line in patch.read_bytes().split(b"\n") if line[:1] in (b"+", b"-") and line[:3] not in (b"+++", b"---"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="a,b,d")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache-dir", help="also measure cold vs warm with this parse cache directory")
    opts = parser.parse_args()
    wanted = opts.cases.split(",")
    inputs: list[tuple[str, Path, str, Path]] = []
    for key in ("a", "b", "c"):
        if key in wanted:
            t0 = time.perf_counter()
            repo, base, patch = build_case(CASES[key], WORK / key)
            print(f"# {CASES[key].name}: ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
            inputs.append((CASES[key].name, repo, base, patch))
    if "d" in wanted:
        inputs += sample_cases()

    header = f"| case | patch lines | git floor (s) | reviewer (s) | ratio | overhead (s) | peak MB |"
    print(header)
    print("|---|---:|---:|---:|---:|---:|---:|")
    scaling: list[tuple[int, float]] = []
    for name, repo, base, patch in inputs:
        floors = [git_floor(repo, base, patch) for _ in range(opts.runs)]
        runs = [run_reviewer(review_args(repo, base, patch, [])) for _ in range(opts.runs)]
        floor = statistics.median(floors)
        wall = statistics.median(r[0] for r in runs)
        peak = max(r[1] for r in runs)
        lines = patch_lines(patch)
        if not name.startswith("d"):
            scaling.append((lines, wall))
        print(f"| {name} | {lines:,} | {floor:.3f} | {wall:.3f} | {wall / floor:.2f} | {wall - floor:.3f} | {peak:.0f} |")
    if len(scaling) >= 2:
        xs = [math.log(x) for x, _ in scaling]
        ys = [math.log(y) for _, y in scaling]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print(f"\nscaling exponent (wall time vs patch lines, log-log fit over {len(scaling)} cases): {slope:.2f}")
    starts = []
    for args in (["--help"], ["rules"]):
        times = []
        for _ in range(opts.runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "reviewer", *args], capture_output=True, check=True)
            times.append(time.perf_counter() - t0)
        starts.append(f"`reviewer {' '.join(args)}` {statistics.median(times):.3f}s")
    print("\nstart-up: " + ", ".join(starts))
    if opts.cache_dir and inputs:
        name, repo, base, patch = inputs[0]
        shutil.rmtree(opts.cache_dir, ignore_errors=True)
        cold = run_reviewer(review_args(repo, base, patch, ["--cache-dir", opts.cache_dir]))[0]
        warm = statistics.median(
            run_reviewer(review_args(repo, base, patch, ["--cache-dir", opts.cache_dir]))[0] for _ in range(opts.runs)
        )
        print(f"\nparse cache on {name}: cold {cold:.3f}s, warm {warm:.3f}s ({cold / warm:.1f}x)")


if __name__ == "__main__":
    main()
