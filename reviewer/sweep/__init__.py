"""`reviewer sweep`: audit a range of history, one review per commit (plan, commit, journal, run, summary)."""
