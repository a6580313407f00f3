"""The rule engine: the rule API, discovery, running families, suppression, caching."""
