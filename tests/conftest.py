import sys
from pathlib import Path

import pytest

# Test helpers (gitrepo.py) live beside the tests.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    """Stored reviews of a test never land in (or come from) the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
