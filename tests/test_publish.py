"""`python -m reviewer.publish.sticky` against recorded GitHub API exchanges.

Each scenario in tests/data/github-api/ is replayed by a local HTTP server:
every request the client sends must be exactly the next recorded one (method,
path, query, headers, JSON body), and every recorded exchange must be played.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from reviewer.publish.sticky import main
from reviewer.report.comment import GITHUB_LIMIT, MARKER

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "github-api"


@dataclass
class Replay:
    """The server's side of a recorded exchange: what it expects next, what went wrong."""

    exchanges: list[dict[str, Any]]
    played: int = 0
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], Any]:
        with self.lock:
            if self.played >= len(self.exchanges):
                self.problems.append(f"unexpected request {method} {target}")
                return 500, {}, {"message": "no more recorded exchanges"}
            exchange = self.exchanges[self.played]
            self.played += 1
        want = exchange["request"]
        url = urlsplit(target)
        got_query = {k: v[0] if len(v) == 1 else v for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        got_body = json.loads(raw.decode("utf-8")) if raw else None
        lower = {k.lower(): v for k, v in headers.items()}
        wrong = []
        if method != want["method"] or url.path != want["path"]:
            wrong.append(f"{method} {url.path} instead of {want['method']} {want['path']}")
        if got_query != want.get("query", {}):
            wrong.append(f"query {got_query} instead of {want.get('query', {})}")
        if got_body != want.get("body"):
            wrong.append(f"body {got_body!r} instead of {want.get('body')!r}")
        for name, value in want.get("headers", {}).items():
            if lower.get(name.lower()) != value:
                wrong.append(f"header {name}: {lower.get(name.lower())!r} instead of {value!r}")
        if wrong:
            self.problems.append(f"exchange {self.played}: " + "; ".join(wrong))
            return 500, {}, {"message": "request differs from the recording"}
        resp = exchange["response"]
        return resp["status"], resp.get("headers", {}), resp.get("body")

    def unplayed(self) -> list[str]:
        return [f"{e['request']['method']} {e['request']['path']}" for e in self.exchanges[self.played:]]


def _handler(replay: Replay) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            status, headers, body = replay.answer(self.command, self.path, dict(self.headers.items()), raw)
            data = b"" if body is None else json.dumps(body).encode("utf-8")
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

    return Handler


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ThreadingHTTPServer] = []

    def start(exchanges: list[dict[str, Any]]) -> tuple[str, Replay]:
        replay = Replay(exchanges)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(replay))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", replay

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib reads proxies from the process environment: the local server must be reached directly."""
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def _scenario(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: dict[str, Any], api: str,
         *extra: str, env: dict[str, str] | None = None, body: str | None = None, pr: bool = True) -> Run:
    body_file = tmp_path / "reviewer-comment.md"
    body_file.write_text(scenario["body"] if body is None else body, encoding="utf-8")
    environ = {"GITHUB_TOKEN": scenario["token"], "GITHUB_REPOSITORY": scenario["repository"], "GITHUB_API_URL": api}
    environ.update(env or {})
    argv = ["--body", str(body_file), *extra] + (["--pr", str(scenario["pull_request"])] if pr else [])
    code = main(argv, environ)
    out, err = capsys.readouterr()
    assert scenario["token"] not in out + err, "the token was printed"
    return Run(code, out, err)


def _played_all(replay: Replay) -> None:
    assert replay.problems == []
    assert replay.unplayed() == []


def test_first_post_when_no_comment_of_ours_exists(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("first-post")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api)
    _played_all(replay)
    assert run.code == 0, run.err
    assert "posted the review comment on #1347" in run.out
    assert "https://github.com/octo-org/recovery-service/pull/1347#issuecomment-2141199999" in run.out


def test_updates_the_existing_comment_found_on_page_two(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("update-on-page-2")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api)
    _played_all(replay)  # page 1, page 2, then PATCH of comment 2141100301: no POST
    assert run.code == 0, run.err
    assert "updated the review comment" in run.out and "issuecomment-2141100301" in run.out


def test_a_marker_comment_by_another_user_is_never_edited(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("planted-marker")
    planted = scenario["exchanges"][0]["response"]["body"][1]
    assert planted["body"].startswith(MARKER) and planted["user"]["login"] != "github-actions[bot]"
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api)
    _played_all(replay)  # the recording has a POST and no PATCH: a PATCH of the planted comment would not match
    assert run.code == 0, run.err
    assert "posted the review comment" in run.out


def test_the_comment_of_a_configured_author_is_edited(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("app-author")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api, "--author", "recovery-reviewer[bot]")
    _played_all(replay)
    assert run.code == 0 and "updated the review comment" in run.out


def test_a_configured_author_is_the_only_other_author_trusted(tmp_path: Path, capsys, serve) -> None:
    """Without --author, the app's marker comment is someone else's: the client posts instead of editing."""
    scenario = _scenario("app-author")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api)
    assert run.code == 2
    assert replay.problems and "POST" in replay.problems[0] and "instead of PATCH" in replay.problems[0]


def test_an_identical_comment_is_not_rewritten(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("unchanged")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api)
    _played_all(replay)
    assert run.code == 0 and "the review comment on #1347 is already up to date" in run.out


def test_forbidden_fails_and_explains_the_permission(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("forbidden")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api)
    _played_all(replay)
    assert run.code == 2 and run.out == ""
    (line,) = run.err.splitlines()
    assert "403 Resource not accessible by integration" in line
    assert "pull-requests: write" in line and "fork" in line and "--optional" in line


@pytest.mark.parametrize("in_actions", [True, False])
def test_forbidden_is_a_warning_when_optional(tmp_path: Path, capsys, serve, in_actions: bool) -> None:
    scenario = _scenario("forbidden")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api, "--optional", env={"GITHUB_ACTIONS": "true"} if in_actions else {})
    _played_all(replay)
    assert run.code == 0
    if in_actions:
        (line,) = run.out.splitlines()
        assert line.startswith("::warning title=reviewer comment::") and "pull-requests: write" in line
        assert run.err == ""
    else:
        assert run.out == "" and run.err.startswith("reviewer-comment: warning:") and "403" in run.err


@pytest.mark.parametrize(("name", "says"), [
    ("not-found", "404 Not Found): repository octo-org/recovery-service or pull request #1347 does not exist"),
    ("rejected", "422 Validation Failed; body is too long (maximum is 65536 characters))"),
])
@pytest.mark.parametrize("optional", [False, True])
def test_not_found_and_rejected_are_errors_even_when_optional(tmp_path: Path, capsys, serve, name: str, says: str,
                                                              optional: bool) -> None:
    scenario = _scenario(name)
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api, *(["--optional"] if optional else []))
    _played_all(replay)
    assert run.code == 2 and run.out == ""
    (line,) = run.err.splitlines()
    assert line.startswith("reviewer-comment: ") and says in line


@pytest.mark.parametrize("token", [None, "", "   "])
def test_missing_token_fails_before_any_request(tmp_path: Path, capsys, serve, token: str | None) -> None:
    scenario = _scenario("first-post")
    api, replay = serve(scenario["exchanges"])
    body = tmp_path / "c.md"
    body.write_text(scenario["body"], encoding="utf-8")
    env = {"GITHUB_REPOSITORY": scenario["repository"], "GITHUB_API_URL": api}
    if token is not None:
        env["GITHUB_TOKEN"] = token
    code = main(["--body", str(body), "--pr", "1347", "--optional"], env)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == "reviewer-comment: GITHUB_TOKEN is not set: give the step the job's token (github.token) as GITHUB_TOKEN\n"
    assert replay.played == 0


def test_pull_request_number_from_the_event_payload(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("first-post")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "synchronize", "number": 1347, "pull_request": {"number": 1347}}))
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api, env={"GITHUB_EVENT_PATH": str(event)}, pr=False)
    _played_all(replay)
    assert run.code == 0


@pytest.mark.parametrize("event", [None, {"ref": "refs/heads/main"}, {"pull_request": {"number": "1347"}}])
def test_missing_pull_request_number_is_an_error(tmp_path: Path, capsys, serve, event: dict | None) -> None:
    scenario = _scenario("first-post")
    env = {}
    if event is not None:
        (tmp_path / "event.json").write_text(json.dumps(event))
        env["GITHUB_EVENT_PATH"] = str(tmp_path / "event.json")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api, env=env, pr=False)
    assert run.code == 2 and replay.played == 0
    assert "no pull request number: pass --pr N" in run.err


def test_a_body_over_githubs_limit_is_refused(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("first-post")
    api, replay = serve(scenario["exchanges"])
    exact = MARKER + "\n" + "x" * (GITHUB_LIMIT - len(MARKER) - 1)
    run = _run(tmp_path, capsys, scenario, api, body=exact + "y")
    assert run.code == 2 and replay.played == 0
    assert f"is {GITHUB_LIMIT + 1} characters; GitHub refuses a comment over {GITHUB_LIMIT}" in run.err
    # Exactly at the limit is still a comment (the recording then rejects the body it does not expect).
    run = _run(tmp_path, capsys, scenario, api, body=exact)
    assert "GitHub refuses a comment over" not in run.err and replay.played > 0


def test_a_body_without_the_marker_is_refused(tmp_path: Path, capsys, serve) -> None:
    scenario = _scenario("first-post")
    api, replay = serve(scenario["exchanges"])
    run = _run(tmp_path, capsys, scenario, api, body="### reviewer: MERGE\n" + MARKER + "\n")
    assert run.code == 2 and replay.played == 0 and "does not start with the marker" in run.err


def test_redirects_are_not_followed(tmp_path: Path, capsys, serve) -> None:
    """urllib would resend the Authorization header to wherever a redirect points."""
    scenario = _scenario("first-post")
    elsewhere, trap = serve([])
    first = dict(scenario["exchanges"][0])
    first["response"] = {"status": 301, "headers": {"Location": f"{elsewhere}/steal"}, "body": None}
    api, replay = serve([first])
    run = _run(tmp_path, capsys, scenario, api)
    _played_all(replay)
    assert trap.played == 0 and trap.problems == []
    assert run.code == 2 and "redirect (301)" in run.err


def test_module_runs_as_a_program_in_isolated_mode(tmp_path: Path, serve) -> None:
    """The action runs `python -I -m reviewer.publish.sticky`: the current directory (possibly a checkout of
    the pull request) is not on sys.path, so a `reviewer/` planted there is never imported."""
    scenario = _scenario("first-post")
    api, replay = serve(scenario["exchanges"])
    planted = tmp_path / "reviewer" / "publish"
    planted.mkdir(parents=True)
    (tmp_path / "reviewer" / "__init__.py").write_text("raise SystemExit('planted reviewer imported')\n")
    (planted / "__init__.py").write_text("")
    (tmp_path / "reviewer-comment.md").write_text(scenario["body"], encoding="utf-8")
    env = {"GITHUB_TOKEN": scenario["token"], "GITHUB_REPOSITORY": scenario["repository"], "GITHUB_API_URL": api,
           "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-I", "-m", "reviewer.publish.sticky", "--body", "reviewer-comment.md",
                           "--pr", "1347"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    _played_all(replay)
    assert proc.returncode == 0, proc.stderr
    assert "posted the review comment on #1347" in proc.stdout and scenario["token"] not in proc.stdout + proc.stderr


def test_recordings_are_well_formed() -> None:
    """Every recording has the fields the replay reads, and the paging one really pages."""
    names = sorted(p.stem for p in DATA.glob("*.json"))
    assert names == ["app-author", "first-post", "forbidden", "not-found", "planted-marker", "rejected",
                     "unchanged", "update-on-page-2"]
    for name in names:
        s = _scenario(name)
        assert s["body"].startswith(MARKER), name
        for e in s["exchanges"]:
            assert {"method", "path", "headers"} <= set(e["request"]) and {"status", "headers"} <= set(e["response"])
    paging = _scenario("update-on-page-2")["exchanges"]
    assert 'rel="next"' in paging[0]["response"]["headers"]["Link"]
    assert 'rel="next"' not in paging[1]["response"]["headers"]["Link"]


@pytest.mark.parametrize("api", ["http://api.github.example", "http://10.0.0.5:8080/api/v3"])
def test_the_token_is_never_sent_over_plain_http_off_this_machine(tmp_path: Path, capsys, api: str) -> None:
    scenario = _scenario("first-post")
    body = tmp_path / "c.md"
    body.write_text(scenario["body"], encoding="utf-8")
    env = {"GITHUB_REPOSITORY": scenario["repository"], "GITHUB_API_URL": api, "GITHUB_TOKEN": scenario["token"]}
    code = main(["--body", str(body), "--pr", "1347", "--optional"], env)
    out, err = capsys.readouterr()
    assert code == 2 and "must use https" in err and scenario["token"] not in out + err
