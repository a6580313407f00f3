"""A signal in the first milliseconds of a run: one line and 130 / 143, never a traceback.

Both entry points (`python -m reviewer` and the `reviewer` console script)
spend tens of milliseconds importing before cli.main() installs its handlers;
reviewer/__init__.py covers that window from its first statements.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reviewer
import reviewer.rules
from reviewer.cli import main

STOPPED = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated", 143)}
# Source files of the program itself: a traceback through any of them is the defect.
PROGRAM_DIRS = (Path(reviewer.__file__).parent, Path(reviewer.rules.__file__).parent)
# PYTHONPROFILEIMPORTTIME prints one such line per import as it ends, whether
# it succeeded or not, indented by nesting (an import's own imports come first).
IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|( *)(\S+)$")
# How CPython itself reports a KeyboardInterrupt that kills its own startup
# (site's .pth processing, runpy), before the program's first statement.
INTERPRETER_STARTUP = ("Fatal Python error: ", "Could not import runpy module")


def _entry_points() -> dict[str, list[str]]:
    script = Path(sys.executable).parent / "reviewer"
    return {
        "python -m reviewer": [sys.executable, "-m", "reviewer", "rules"],
        "console script": [str(script if script.exists() else shutil.which("reviewer") or script), "rules"],
    }


def _package_imported(err: str) -> bool:
    """reviewer/__init__.py ran to its end, so the early handlers were installed.

    The line for `reviewer` alone does not prove it (a failed import prints
    one too, and so does the enclosing import failing with it, less indented).
    An import that ends later at the same or a deeper level does: it ran
    after the package was in place.
    """
    imports = [(len(m.group(1)), m.group(2)) for m in map(IMPORT_LINE.match, err.splitlines()) if m]
    names = [name for _, name in imports]
    if "reviewer" not in names:
        return False
    at = names.index("reviewer")
    return any(depth >= imports[at][0] for depth, _ in imports[at + 1:])


def _without_import_timing(err: str) -> str:
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("import time:"))


def _problem(sig: signal.Signals, rc: int, out: str, err: str, complete: str) -> str | None:
    """What is wrong with one run that got `sig`, or None."""
    word, code = STOPPED[sig]
    if any(f'File "{d}{os.sep}' in err for d in PROGRAM_DIRS):
        return f"exit {rc}: a traceback through the program's own code"
    if rc == 0:
        # Finished: before the signal, ignoring it in main()'s final cleanup, or after
        # CPython lost it in its own startup (an "Exception ignored" KeyboardInterrupt).
        return None if out == complete else "exit 0 without the complete output"
    rest = _without_import_timing(err)
    if rc == code:
        return None if rest == f"reviewer: {word}; no verdict\n" else f"exit {rc}, stderr {rest[-300:]!r}"
    if _package_imported(err):
        return f"exit {rc} after the package was imported, stderr {rest[-300:]!r}"
    # Still inside the interpreter's startup (site, .pth files, runpy), before
    # any line of the program ran: the default action killed it (a shell shows
    # 128+n), or CPython stopped its own startup; no program code can run there.
    if rc == -sig or (rc == 1 and rest.startswith(INTERPRETER_STARTUP)):
        return None
    return f"exit {rc} before the package was imported, stderr {rest[-300:]!r}"


@pytest.mark.parametrize("entry", list(_entry_points()))
def test_early_signals_end_in_one_line_and_130_or_143(entry: str) -> None:
    """SIGINT and SIGTERM sent 0-80 ms after start, over and over: whatever point of
    the imports they hit, the run ends as main() ends it, or finished whole."""
    cmd = _entry_points()[entry]
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    complete = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60).stdout
    assert complete.count("\n") > 10  # the rules listing
    problems: list[str] = []
    handled = 0
    deadline = time.monotonic() + 8
    for delay_ms in (0, 5, 10, 15, 20, 25, 30, 40, 50, 60, 80) * 2:
        for sig in STOPPED:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            time.sleep(delay_ms / 1000)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
            handled += proc.returncode == STOPPED[sig][1]
            problem = _problem(sig, proc.returncode, out, err, complete)
            if problem:
                problems.append(f"{sig.name} after {delay_ms} ms: {problem}")
        if time.monotonic() > deadline:
            break
    assert not problems, "\n".join(problems)
    assert handled >= 4, "no signal landed while the program ran: the test proved nothing"


SHIM = '''\
"""Stands in for argparse, which reviewer/cli.py imports before main() exists."""
import os, signal, time
os.kill(os.getpid(), getattr(signal, os.environ["SIGNAL_DURING_IMPORT"]))
time.sleep(30)  # the handler runs here; if it returns, the test fails on the exit status
'''


@pytest.mark.parametrize("entry", list(_entry_points()))
@pytest.mark.parametrize("sig", list(STOPPED), ids=lambda s: s.name)
def test_a_signal_during_the_cli_imports_is_one_line(tmp_path: Path, entry: str, sig: signal.Signals) -> None:
    """Deterministic version of the loop above: the signal lands while reviewer.cli is
    still importing its modules (a module on PYTHONPATH named `argparse`, which the
    interpreter's own startup never imports, sends it), long before main() runs."""
    (tmp_path / "argparse.py").write_text(SHIM)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "SIGNAL_DURING_IMPORT": sig.name}
    done = subprocess.run(_entry_points()[entry], capture_output=True, text=True, env=env, timeout=60)
    word, code = STOPPED[sig]
    assert (done.returncode, done.stdout, done.stderr) == (code, "", f"reviewer: {word}; no verdict\n")


def test_importing_the_package_leaves_signal_handling_alone() -> None:
    """A library user's `import reviewer` (here a script not named reviewer) keeps
    the interpreter's own handlers: Ctrl-C still raises KeyboardInterrupt."""
    probe = (
        "import signal, reviewer\n"
        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler,"
        " signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "True True\n"), done.stderr


def test_main_in_process_restores_the_callers_handlers(capsys) -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert main(["rules"]) == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    capsys.readouterr()
