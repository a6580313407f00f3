"""The change set, rebuilt from git objects."""
