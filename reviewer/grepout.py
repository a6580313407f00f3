"""Reading `git grep -z` output over a tree (reviewer/gitio.py runs the command).

A record names its file as `<tree>:<path>`. A path never holds a NUL and may hold a
line break; a line's text never holds a line break and may hold a NUL (git's `-I`
judges a file by its first 8,000 bytes). Names are never quoted under `-z`, so a
non-ASCII or odd name comes back as it is and matches the tree's own listing.
"""

from __future__ import annotations


def grep_paths(out: bytes, tree: str) -> tuple[str, ...]:
    """The paths of `git grep -l -z <tree>`, sorted."""
    prefix = f"{tree}:".encode()
    names = {name[len(prefix):] if name.startswith(prefix) else name for name in out.split(b"\0") if name}
    return tuple(sorted(name.decode("utf-8", "surrogateescape") for name in names))


def grep_records(out: bytes, tree: str) -> list[tuple[str, str]]:
    """(path, line) of each `<tree>:<path>\\0<text>\\n` record of `git grep -z <tree>`, in git's order.

    Read in order, the name to its NUL and the text to its line break (see above for why
    neither split alone is safe); a file's lines come together, so its name is decoded once.
    """
    prefix = f"{tree}:".encode()
    lines: list[tuple[str, str]] = []
    pos, size, last, path = 0, len(out), b"", ""
    find, index = out.find, out.index
    while pos < size:
        name_end = index(b"\0", pos)
        text_end = find(b"\n", name_end + 1)
        text_end = size if text_end < 0 else text_end
        name = out[pos:name_end]
        if name != last:
            raw = name[len(prefix):] if name.startswith(prefix) else name
            path, last = raw.decode("utf-8", "surrogateescape"), name
        lines.append((path, out[name_end + 1:text_end].decode("utf-8", "replace")))
        pos = text_end + 1
    return lines
