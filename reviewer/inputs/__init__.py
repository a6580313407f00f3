"""Inputs read once: the patch, the configuration, a pull request's refs."""
