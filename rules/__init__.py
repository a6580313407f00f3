"""Built-in rule families: one module per invariant family (installed as `reviewer.rules`)."""
