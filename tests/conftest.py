import sys
from pathlib import Path

import pytest

# Test helpers (gitrepo.py) live beside the tests.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    """Stored reviews of a test never land in (or come from) the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def _outside_github_actions(monkeypatch):
    """A test run inside GitHub Actions must not review with that run's own
    pull-request event, permalinks or step summary."""
    for name in ("GITHUB_EVENT_PATH", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID",
                 "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_EVENT_NAME", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def report_validator():
    """A validator of the shipped `reviewer-report/1` JSON Schema (reviewer/schemas/)."""
    import jsonschema

    from reviewer.schemas import report_schema

    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_errors(validator, data) -> list[str]:
    """Every way `data` breaks the schema, one line each: `path.to.value: message`."""
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'.'.join(str(p) for p in e.absolute_path) or '(report)'}: {e.message[:300]}" for e in errors]


class ReportSchemaViolation(AssertionError):
    pass


@pytest.fixture(autouse=True)
def _reports_follow_the_schema(monkeypatch, report_validator):
    """Every report the suite produces in-process validates against the shipped schema.

    Two seams: `review.assemble`, which builds every report (`execute()` and
    `empty_report()` look it up at call time), and `json_format.to_dict`,
    which `--format json` renders through, so reports given a delta after
    assembly (`--previous`, `reviewer pr` re-runs) are checked too.
    """
    from reviewer import review
    from reviewer.report import json_format

    assemble, to_dict = review.assemble, json_format.to_dict

    def check(data, where: str):
        errors = schema_errors(report_validator, data)
        if errors:
            raise ReportSchemaViolation(f"{where}: the report breaks reviewer-report/1:\n  " + "\n  ".join(errors))
        return data

    def checked_assemble(*args, **kwargs):
        report = assemble(*args, **kwargs)
        check(to_dict(report), "review.assemble")
        return report

    def checked_to_dict(report):
        return check(to_dict(report), "json_format.to_dict")

    checked_assemble.__wrapped__ = assemble  # type: ignore[attr-defined]
    checked_to_dict.__wrapped__ = to_dict  # type: ignore[attr-defined]
    monkeypatch.setattr(review, "assemble", checked_assemble)
    monkeypatch.setattr(json_format, "to_dict", checked_to_dict)
