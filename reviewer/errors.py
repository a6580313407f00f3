"""Errors that stop a review before a report can exist (exit status 2)."""

from __future__ import annotations


class ReviewerError(Exception):
    """A clear, one-line reason the review could not be produced.

    The CLI prints `reviewer: <message>` on standard error and exits 2; no
    traceback, because the message already says what to fix.
    """


class GitError(ReviewerError):
    """git itself refused or failed; carries git's own last line."""
