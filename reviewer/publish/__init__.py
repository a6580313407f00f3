"""Publishing a finished review where people read it (the pull request's sticky comment)."""
