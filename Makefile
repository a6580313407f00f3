# Two entry points, each creating .venv on first use: `make demo`, `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# The distribution was renamed (recovery-reviewer): drop the old one from an existing venv.
	$(BIN)/python -m pip uninstall --quiet --yes reviewer 2>/dev/null || true
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

# The demo's verdict is its output: exit 1 (DO-NOT-MERGE) is a successful demo,
# exit 2 (no review could be produced) is not.
demo: $(STAMP)
	$(BIN)/reviewer demo || [ $$? -eq 1 ]

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info
