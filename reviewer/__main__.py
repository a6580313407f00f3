import os
import sys

from reviewer.cli import main


def _exit(code: int) -> None:
    if code == 130:
        # A KeyboardInterrupt that passed through exec() of source text (as
        # dataclasses build their methods) sets a flag in CPython that makes
        # `python -m` end by SIGINT whatever main() returned, even though main()
        # caught it. main() has cleaned up everything; end with its status.
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed or broken pipe: nothing more can be said there
        os._exit(code)
    raise SystemExit(code)


_exit(main())
