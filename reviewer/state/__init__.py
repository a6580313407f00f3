"""Stored reviews, re-runs and deltas."""
