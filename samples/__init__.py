"""Shipped samples (installed as `reviewer.samples`)."""
