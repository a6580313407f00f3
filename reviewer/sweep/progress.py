"""Progress on standard error: one rewritten line on a terminal, a line per tenth otherwise.

A log (CI) gets a bounded number of lines however long the range is.
"""

from __future__ import annotations

from typing import IO, Any


class Progress:
    def __init__(self, total: int, already: int, stream: IO[str] | None) -> None:
        self.total, self.count, self.stream = total, already, stream
        self.tty = bool(stream is not None and stream.isatty())
        self.every = max(1, -(-total // 10))
        self.blocked = 0
        if stream is not None and already:
            stream.write(f"sweep: resuming, {already} of {total} commits already reviewed\n")

    def step(self, line: dict[str, Any]) -> None:
        self.count += 1
        if line.get("verdict") == "DO-NOT-MERGE":
            self.blocked += 1
        if self.stream is None:
            return
        text = (f"sweep: {self.count}/{self.total} ({100 * self.count // max(1, self.total)}%) "
                f"{line['commit'][:12]} {line.get('verdict') or line.get('status')}; {self.blocked} DO-NOT-MERGE")
        if self.tty:
            self.stream.write("\r\x1b[2K" + text)
            self.stream.flush()
        elif self.count % self.every == 0 or self.count == self.total:
            self.stream.write(text + "\n")

    def close(self) -> None:
        if self.stream is not None and self.tty:
            self.stream.write("\n")
            self.stream.flush()
