"""reviewer: a review bot for patches to crash-safe services."""

__version__ = "0.1.0"
# Bumped whenever a rule's behaviour changes, so stored reviews can tell.
RULESET_VERSION = "2026.11"
