"""`reviewer sweep`: review every commit of a range against its parent, in one process or N.

Commits are reviewed in the plan's order and their lines written in that
order whatever `--jobs` is, so the output file is the same for one job or
many. Worker processes are started fresh (spawn), never forked from a
process holding parsers and open git pipes.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable, Iterator

from reviewer.errors import ReviewerError
from reviewer.sweep import journal
from reviewer.sweep.commit import Done, Settings, review_commit, review_run
from reviewer.sweep.plan import Item, Shard
from reviewer.sweep.progress import Progress


# Commits a worker reviews in one go (see _reviewed).
RUN_LENGTH = 16


@dataclass(frozen=True)
class Outcome:
    """Every line of the sweep (resumed ones included, in plan order) and this run's timings."""

    lines: tuple[dict, ...]
    timed: tuple[tuple[str, float], ...]
    resumed: int


def _quiet_worker() -> None:
    # Ctrl-C reaches the whole process group: the parent decides what stops,
    # so a worker never dies mid-line with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _reviewed(settings: Settings, items: list[Item], digest: str, jobs: int) -> Iterator[Done]:
    from reviewer.engine.shared import Shared

    if jobs <= 1 or len(items) <= 1:
        shared = Shared()
        for item in items:
            yield review_commit(settings, item, digest, shared)
        return
    # Runs of consecutive commits, so each worker reuses what neighbours share;
    # short enough that N workers stay busy to the end of the range.
    size = max(1, min(RUN_LENGTH, -(-len(items) // (jobs * 4))))
    runs = [items[i:i + size] for i in range(0, len(items), size)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_quiet_worker) as pool:
        try:
            for done in pool.map(review_run, [settings] * len(runs), runs, [digest] * len(runs)):
                yield from done
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def sweep(
    settings: Settings,
    items: Iterable[Item],
    out: Path | None,
    jobs: int = 1,
    shard: Shard | None = None,
    restart: bool = False,
    progress_stream: IO[str] | None = sys.stderr,
) -> Outcome:
    if jobs < 1:
        raise ReviewerError(f"--jobs {jobs}: must be 1 or more")
    planned = [i for i in items if shard is None or shard.takes(i.commit)]
    digest = settings.digest
    done = {} if out is None or restart else journal.load(out, digest)
    todo = [i for i in planned if i.commit not in done]
    if settings.reports:
        Path(settings.reports).mkdir(parents=True, exist_ok=True)
    progress = Progress(len(planned), len(planned) - len(todo), progress_stream)
    timed: list[tuple[str, float]] = []
    fh = journal.open_for_append(out, restart) if out is not None else None
    try:
        for result in _reviewed(settings, todo, digest, jobs):
            done[result.line["commit"]] = result.line
            timed.append((result.line["commit"], result.seconds))
            if fh is not None:
                journal.append(fh, result.line)
            progress.step(result.line)
    finally:
        progress.close()
        if fh is not None:
            fh.close()
    lines = tuple(done[i.commit] for i in planned if i.commit in done)
    return Outcome(lines, tuple(timed), len(planned) - len(todo))
