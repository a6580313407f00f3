"""A signal in the first milliseconds of a run: one line and 130 / 143, never a traceback.

Both entry points (`python -m reviewer` and the `reviewer` console script)
spend tens of milliseconds importing before cli.main() installs its handlers;
reviewer/__init__.py covers that window from its first statements.

No test here races a delay: each makes the process signal itself at a chosen
point (an import hook, a stand-in module), so a slow or busy machine changes
nothing but the time taken.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from reviewer.cli import main

def _default_signals() -> None:
    """Runs in each child before it execs: a shell starts a background job (a CI runner's step, a
    `make test &`) with SIGINT ignored, the child inherits that, and the reviewer rightly keeps an
    ignored signal ignored. These tests are about the default dispositions, so they start from them."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})  # a blocked mask is inherited too


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, preexec_fn=_default_signals, **kwargs)


STOPPED = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated", 143)}

# Stands in for site's sitecustomize (first on PYTHONPATH, so it runs at the end
# of the interpreter's own start-up, before the program's first statement). It
# hooks every import made once the `reviewer` package exists: RECORD_IMPORTS
# lists their names in the order they start; SIGNAL_AT_IMPORT=name:SIG sends
# SIG to the process as the import of `name` starts, and waits there for the
# handler.
SITECUSTOMIZE = '''\
import os, signal, sys, time

class _Hook:
    def __init__(self):
        self.record = os.environ.get("RECORD_IMPORTS")
        name, _, sig = os.environ.get("SIGNAL_AT_IMPORT", "").partition(":")
        self.target, self.sig = name, getattr(signal, sig, None)

    def find_spec(self, name, path=None, target=None):
        if "reviewer" not in sys.modules:
            return None  # still the interpreter's own start-up (runpy, site)
        if self.record:
            with open(self.record, "a") as fh:
                fh.write(name + "\\n")
        if name == self.target and self.sig is not None:
            self.target = None
            os.kill(os.getpid(), self.sig)
            time.sleep(30)  # the handler runs here; if it returns, the exit status shows it
        return None

sys.meta_path.insert(0, _Hook())
'''


def _entry_points() -> dict[str, list[str]]:
    script = Path(sys.executable).parent / "reviewer"
    return {
        "python -m reviewer": [sys.executable, "-m", "reviewer", "rules"],
        "console script": [str(script if script.exists() else shutil.which("reviewer") or script), "rules"],
    }


def _hooked(tmp_path: Path, **env: str) -> dict[str, str]:
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return {**os.environ, "PYTHONPATH": str(tmp_path), **env}


def _import_points(names: list[str], count: int = 10) -> list[str]:
    """`count` imports spread evenly over the run, its first and its last included."""
    step = (len(names) - 1) / (count - 1)
    return list(dict.fromkeys(names[round(i * step)] for i in range(count)))


@pytest.mark.parametrize("entry", list(_entry_points()))
def test_a_signal_at_any_point_of_the_imports_ends_in_one_line_and_130_or_143(tmp_path: Path, entry: str) -> None:
    """SIGINT and SIGTERM delivered exactly as chosen imports start, spread over the whole run
    from the package's first import to the last one main() makes: each ends as main() ends it."""
    cmd = _entry_points()[entry]
    record = tmp_path / "imports.txt"
    complete = _run(cmd, timeout=120,
                              env=_hooked(tmp_path, RECORD_IMPORTS=str(record)))
    assert complete.returncode == 0 and complete.stdout.count("\n") > 10, complete.stderr  # the rules listing
    names = list(dict.fromkeys(record.read_text().split()))
    # Imports before main() (reviewer.cli's) and inside it (the command loads the rules).
    assert {"reviewer.cli", "reviewer.engine.registry"} <= set(names) and len(names) > 20, names
    points = _import_points(names)
    assert points[0] == names[0] and points[-1] == names[-1] and len(points) >= 8
    problems = []
    for name in points:
        for sig, (word, code) in STOPPED.items():
            done = _run(cmd, timeout=120,
                                  env=_hooked(tmp_path, SIGNAL_AT_IMPORT=f"{name}:{sig.name}"))
            if (done.returncode, done.stdout, done.stderr) != (code, "", f"reviewer: {word}; no verdict\n"):
                problems.append(f"{sig.name} at the import of {name}: exit {done.returncode}, "
                                f"stdout {done.stdout[-100:]!r}, stderr {done.stderr[-300:]!r}")
    assert not problems, "\n".join(problems)


SHIM = '''\
"""Stands in for argparse, which reviewer/cli.py imports before main() exists."""
import os, signal, time
os.kill(os.getpid(), getattr(signal, os.environ["SIGNAL_DURING_IMPORT"]))
time.sleep(30)  # the handler runs here; if it returns, the test fails on the exit status
'''


@pytest.mark.parametrize("entry", list(_entry_points()))
@pytest.mark.parametrize("sig", list(STOPPED), ids=lambda s: s.name)
def test_a_signal_during_the_cli_imports_is_one_line(tmp_path: Path, entry: str, sig: signal.Signals) -> None:
    """The signal lands while reviewer.cli is still importing its modules (a module on PYTHONPATH named `argparse`, which the
    interpreter's own startup never imports, sends it), long before main() runs."""
    (tmp_path / "argparse.py").write_text(SHIM)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "SIGNAL_DURING_IMPORT": sig.name}
    done = _run(_entry_points()[entry], env=env, timeout=60)
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
    done = _run([sys.executable, "-c", probe], timeout=60)
    assert (done.returncode, done.stdout) == (0, "True True\n"), done.stderr


def test_main_that_cannot_make_its_scratch_directory_leaves_the_callers_signals_alone(tmp_path: Path, monkeypatch) -> None:
    """An unwritable TMPDIR fails main() before its run starts: the caller's handlers and signal mask
    are as they were (a mask left blocking SIGINT would be inherited by every process the host starts)."""
    import tempfile

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), signal.pthread_sigmask(signal.SIG_BLOCK, [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    with pytest.raises(OSError):
        main(["rules"])
    after = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert after == before


def test_main_in_process_restores_the_callers_handlers(capsys) -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert main(["rules"]) == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    capsys.readouterr()
