"""Wall-clock budgets on the main thread, nestable.

A family's budget runs inside the whole review's budget: the inner one arms
the timer only when it ends sooner, and on leaving gives the outer one back
what is left of it, so neither can outlive or cancel the other.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def time_budget(seconds: float, exceeded: type[BaseException]) -> Iterator[None]:
    """Raise `exceeded` in the main thread once `seconds` have passed.

    Off the main thread (where SIGALRM cannot be delivered) the body runs
    unbounded; the command line always runs on the main thread.
    """
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    if outer_left and outer_left <= seconds:
        yield  # the enclosing budget ends first: it alone stays armed
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise exceeded()

    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            # At least a microsecond: an outer budget already spent fires at once.
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - started), 1e-6))
