"""Jinja2 templates of the reports (installed as `reviewer.templates`)."""
