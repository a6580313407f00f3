"""A finding's failure sequence as a Mermaid sequence diagram.

GitHub draws ```` ```mermaid ```` blocks in comments and job summaries; a
terminal shows the source, so the report keeps the plain "Failure
sequence." line as well and folds the diagram away.

The steps are rule prose that quotes patched code, so every character
that means something to Mermaid's sequence grammar (`;` and newlines end
a statement, `#` starts an entity code, `%%` a comment or directive, `:`
a message, `<`/`>` arrows and HTML, backticks Markdown strings, the word
`end` a block) is written as a Mermaid entity code (`#59;`), which
Mermaid decodes only after parsing. No backtick survives, so nothing in a
step can close the fence either.
"""

from __future__ import annotations

import re
import textwrap

# Characters that are plain text wherever our statements put them: after
# the message colon, after `Note over X:`, in a participant alias.
_PLAIN = re.compile(r"[A-Za-z0-9 ,.()'/_=+?!\-]")
# `end` closes a block wherever the grammar meets it as a word.
_END_WORD = re.compile(r"(?i)(?<![A-Za-z0-9_])(e)(?=nd(?![A-Za-z0-9_]))")
# Mermaid does not wrap message text by default; lines are broken here so
# the diagram stays narrow and renders the same everywhere.
WRAP = 48
PARTICIPANT = "F"


def escape(value: str) -> str:
    """`value` as Mermaid message text: plain characters kept, the rest as entity codes."""
    out = []
    for ch in " ".join(value.split()):
        out.append(ch if _PLAIN.fullmatch(ch) or (ch.isalnum() and not ch.isascii()) else f"#{ord(ch)};")
    return _END_WORD.sub(lambda m: f"#{ord(m[1])};", "".join(out))


def _label(step: str) -> str:
    """One step, wrapped on words, each line escaped, joined by Mermaid's own line break."""
    lines = textwrap.wrap(" ".join(step.split()), WRAP, break_long_words=False, break_on_hyphens=False) or [""]
    return "<br/>".join(escape(line) for line in lines)


def diagram(steps: tuple[str, ...], actor: str) -> list[str]:
    """The source lines of a sequence diagram: one numbered self-message per
    step on the `actor` lifeline, and the last step (what goes wrong) as a note.

    The steps name no participants, so the diagram draws an ordered timeline
    rather than inventing who sends what to whom.
    """
    lines = ["sequenceDiagram", "    autonumber", f"    participant {PARTICIPANT} as {escape(actor)}"]
    *before, outcome = steps or ("",)
    lines += [f"    {PARTICIPANT}->>{PARTICIPANT}: {_label(step)}" for step in before]
    lines.append(f"    Note over {PARTICIPANT}: {_label(outcome)}")
    return lines
