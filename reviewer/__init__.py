"""reviewer: a review bot for patches to crash-safe services."""

# Before anything else: both entry points (`python -m reviewer` and the
# `reviewer` console script) import this package first, and the imports that
# follow take tens of milliseconds before cli.main() installs its handlers. A
# Ctrl-C or SIGTERM in that window must end like one during the run (one line,
# 130 / 143), not with a KeyboardInterrupt traceback or a silent kill.
# `_signal` rather than `signal`: the public module imports enum, which costs
# time exactly while we race the signal.
import _signal
import os as _os
import sys as _sys

__version__ = "0.1.0"
# Bumped whenever a rule's behaviour changes, so stored reviews can tell.
RULESET_VERSION = "2026.12.04.2"

_STOPPED = {_signal.SIGINT: ("interrupted", 130), _signal.SIGTERM: ("terminated", 143)}


def _stop_early(signum: int, frame: object) -> None:
    """Handler until main() takes over: nothing exists yet that needs cleaning
    up, so end at once, the way main() ends on the same signal."""
    word, code = _STOPPED[signum]
    try:
        _os.write(2, f"reviewer: {word}; no verdict\n".encode())
    finally:
        _os._exit(code)


def _module_after_dash_m(orig_argv: list[str]) -> str | None:
    for i, arg in enumerate(orig_argv[1:], 1):
        if arg == "-m":
            return orig_argv[i + 1] if i + 1 < len(orig_argv) else None
        if arg.startswith("-m"):
            return arg[2:]
    return None


def _started_as_program() -> bool:
    """True only when this import is the start of the `reviewer` program.

    A library user's `import reviewer` must not change how their process
    answers signals. `python -m reviewer` imports the package while sys.argv[0]
    is still "-m"; the console script is a file named `reviewer`.
    """
    argv0 = _sys.argv[0] if getattr(_sys, "argv", None) else ""
    if argv0 == "-m":
        return _module_after_dash_m(getattr(_sys, "orig_argv", [])) in ("reviewer", "reviewer.__main__")
    return _os.path.basename(argv0) == "reviewer"


def _install_early_handlers() -> None:
    # Only over the interpreter's own defaults: a host that set its own
    # handlers, or a shell that started us with SIGINT ignored, keeps them.
    try:
        if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
            _signal.signal(_signal.SIGINT, _stop_early)
        if _signal.getsignal(_signal.SIGTERM) == _signal.SIG_DFL:
            _signal.signal(_signal.SIGTERM, _stop_early)
    except ValueError:
        pass  # not the main thread: main() runs without signal handling there too


if _started_as_program():
    _install_early_handlers()
