"""Post or update the one sticky review comment of a pull request.

`python -m reviewer.publish.sticky --body reviewer-comment.md` lists the pull
request's comments, edits the one this bot posted on an earlier push and
otherwise posts a new one, so a pull request carries one review comment that
follows every push instead of one comment per push.

A comment is ours only when its body starts with the marker AND its author is
the token's own user (`github-actions[bot]` for the job's token, or a login
given with `--author`): anyone may post a comment starting with the marker,
and editing theirs would put our verdict under their name, or let them keep a
stale verdict where readers look for the current one.

Standard library only (`urllib.request`): the token passes through as little
code as possible, and never into a message, an exception or a log line.
Redirects are refused, because urllib would resend the Authorization header
to wherever a redirect points.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from reviewer.report.comment import GITHUB_LIMIT, MARKER, size
from reviewer.report.github import escape_data

PROG = "reviewer-comment"
DEFAULT_API = "https://api.github.com"
ACTIONS_BOT = "github-actions[bot]"
PER_PAGE = 100
# 10,000 comments: a bound, so a misbehaving server cannot keep us paging forever.
MAX_PAGES = 100
TIMEOUT_SECONDS = 30.0
API_VERSION = "2022-11-28"
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_NEXT = re.compile(r'<[^>]*>\s*;\s*rel="?next"?')
_PERMISSION_HINT = (
    "the token needs `pull-requests: write` (add it to the workflow's `permissions:`); a pull request from a fork "
    "gets a read-only token, so its comment cannot be posted (--optional makes that a warning)"
)


class PublishError(Exception):
    """One line for standard error. `forgivable`: --optional turns it into a warning (a read-only token)."""

    def __init__(self, message: str, forgivable: bool = False) -> None:
        super().__init__(message)
        self.forgivable = forgivable


@dataclass(frozen=True)
class Target:
    """Where the comment goes. The token is kept out of repr() so no traceback or log can show it."""

    api: str
    repository: str
    number: int
    token: str = field(repr=False)


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]  # lower-case names
    data: Any


@dataclass(frozen=True)
class Outcome:
    action: str  # "posted", "updated" or "unchanged"
    comment_id: int
    url: str


class _RefuseRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None  # urllib then raises HTTPError with the 3xx status


_OPENER = urllib.request.build_opener(_RefuseRedirect())


def _one_line(value: object, limit: int = 200) -> str:
    """Text from the server, made safe for one line of a log."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit] + "…"


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def _server_message(data: Any) -> str:
    if not isinstance(data, dict):
        return ""
    parts = [str(data.get("message") or "")]
    for err in data.get("errors") or []:
        if isinstance(err, dict):
            parts.append(str(err.get("message") or err.get("code") or ""))
        elif isinstance(err, str):
            parts.append(err)
    return _one_line("; ".join(p for p in parts if p))


def _http_error(target: Target, what: str, status: int, headers: Mapping[str, str], data: Any) -> PublishError:
    said = _server_message(data)
    said = f" {said}" if said else ""
    if status == 401:
        return PublishError(f"GitHub refused the token while trying to {what} (401{said}): pass the job's token as GITHUB_TOKEN")
    if status == 403:
        if headers.get("x-ratelimit-remaining") == "0":
            return PublishError(f"GitHub's API rate limit is used up; could not {what} (403{said})", forgivable=True)
        return PublishError(f"GitHub refused to {what} (403{said}): {_PERMISSION_HINT}", forgivable=True)
    if status == 404:
        return PublishError(
            f"could not {what} (404{said}): repository {target.repository} or pull request #{target.number} "
            "does not exist, or the token cannot see it"
        )
    if status == 422:
        return PublishError(f"GitHub rejected the request to {what} (422{said})")
    if 300 <= status < 400:
        return PublishError(f"GitHub answered a redirect ({status}) to a request to {what}; redirects are not followed")
    return PublishError(f"could not {what}: GitHub answered {status}{said}")


def _call(target: Target, method: str, path: str, what: str,
          query: Mapping[str, str | int] | None = None, payload: Mapping[str, Any] | None = None) -> Response:
    url = target.api.rstrip("/") + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
    data = json.dumps(payload).encode("utf-8") if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Accept": "application/vnd.github+json",
        "Authorization": f"Bearer {target.token}",
        "X-GitHub-Api-Version": API_VERSION,
        "User-Agent": PROG,
        **({"Content-Type": "application/json"} if data is not None else {}),
    })
    try:
        with _OPENER.open(request, timeout=TIMEOUT_SECONDS) as resp:
            headers = {k.lower(): v for k, v in resp.headers.items()}
            return Response(resp.status, headers, _decode(resp.read()))
    except urllib.error.HTTPError as exc:
        headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
        raise _http_error(target, what, exc.code, headers, _decode(exc.read() or b"")) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise PublishError(f"could not {what}: cannot reach {target.api} ({_one_line(reason)})") from None


def _is_ours(comment: Any, authors: frozenset[str]) -> bool:
    if not isinstance(comment, dict):
        return False
    body, user = comment.get("body"), comment.get("user")
    return (isinstance(body, str) and body.startswith(MARKER) and isinstance(user, dict)
            and user.get("login") in authors and isinstance(comment.get("id"), int))


def find_comment(target: Target, authors: frozenset[str]) -> dict[str, Any] | None:
    """The first comment (oldest first, as GitHub lists them) that is ours, or None."""
    path = f"/repos/{target.repository}/issues/{target.number}/comments"
    for page in range(1, MAX_PAGES + 1):
        resp = _call(target, "GET", path, f"list the comments of #{target.number}",
                     query={"per_page": PER_PAGE, "page": page})
        if not isinstance(resp.data, list):
            raise PublishError(f"GitHub's list of the comments of #{target.number} is not a JSON list")
        for comment in resp.data:
            if _is_ours(comment, authors):
                return comment
        # GitHub's Link header names the next page while there is one. We only
        # ask for page N+1 ourselves, never follow the URL: the token goes to
        # the API we were given and nowhere else.
        if not _NEXT.search(resp.headers.get("link", "")):
            return None
    raise PublishError(f"more than {MAX_PAGES * PER_PAGE} comments on #{target.number}; not looking further")


def publish(target: Target, body: str, authors: frozenset[str]) -> Outcome:
    existing = find_comment(target, authors)
    if existing is not None:
        comment_id = existing["id"]
        url = str(existing.get("html_url") or "")
        if existing.get("body") == body:
            return Outcome("unchanged", comment_id, url)
        resp = _call(target, "PATCH", f"/repos/{target.repository}/issues/comments/{comment_id}",
                     f"update comment {comment_id}", payload={"body": body})
        action = "updated"
    else:
        resp = _call(target, "POST", f"/repos/{target.repository}/issues/{target.number}/comments",
                     f"post a comment on #{target.number}", payload={"body": body})
        action = "posted"
    data = resp.data if isinstance(resp.data, dict) else {}
    new_id = data.get("id")
    return Outcome(action, new_id if isinstance(new_id, int) else 0, str(data.get("html_url") or ""))


def read_body(path: str) -> str:
    try:
        body = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PublishError(f"cannot read the comment body {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if size(body) > GITHUB_LIMIT:
        raise PublishError(f"{path} is {size(body)} characters; GitHub refuses a comment over {GITHUB_LIMIT}")
    if not body.startswith(MARKER):
        # Without the marker on the first line the next run could not find
        # this comment again, and would post a second one on every push.
        raise PublishError(f"{path} does not start with the marker {MARKER}; it is not a reviewer comment")
    return body


def _pull_number(given: int | None, environ: Mapping[str, str]) -> int:
    if given is not None:
        if given <= 0:
            raise PublishError(f"--pr must be a positive pull request number, not {given}")
        return given
    event_path = environ.get("GITHUB_EVENT_PATH", "")
    number: Any = None
    if event_path:
        try:
            event = json.loads(Path(event_path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PublishError(f"cannot read the event payload GITHUB_EVENT_PATH={event_path}: {_one_line(exc)}") from None
        pull = event.get("pull_request") if isinstance(event, dict) else None
        number = pull.get("number") if isinstance(pull, dict) else None
    if isinstance(number, bool) or not isinstance(number, int) or number <= 0:
        raise PublishError("no pull request number: pass --pr N, or run on a pull_request event "
                           "(GITHUB_EVENT_PATH with pull_request.number)")
    return number


def target_from(environ: Mapping[str, str], pr: int | None) -> Target:
    token = environ.get("GITHUB_TOKEN", "").strip()
    if not token:
        raise PublishError("GITHUB_TOKEN is not set: give the step the job's token (github.token) as GITHUB_TOKEN")
    repository = environ.get("GITHUB_REPOSITORY", "")
    if not _REPOSITORY.fullmatch(repository):
        raise PublishError(f"GITHUB_REPOSITORY must be OWNER/NAME, not {_one_line(repository, 80)!r}")
    api = environ.get("GITHUB_API_URL", "").strip() or DEFAULT_API
    parts = urllib.parse.urlsplit(api)
    if parts.scheme not in ("https", "http"):
        raise PublishError(f"GITHUB_API_URL must be an http(s) URL, not {_one_line(api, 80)!r}")
    # The token goes with every request: never in clear text over a network
    # (plain http only to this machine, as a local test server is).
    if parts.scheme == "http" and parts.hostname not in ("127.0.0.1", "::1", "localhost"):
        raise PublishError(f"GITHUB_API_URL must use https to send the token, not {_one_line(api, 80)!r}")
    return Target(api, repository, _pull_number(pr, environ), token)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m reviewer.publish.sticky",
                                description="Post or update the pull request's one reviewer comment.")
    p.add_argument("--body", required=True, metavar="FILE", help="the comment (reviewer --format comment=FILE)")
    p.add_argument("--pr", type=int, metavar="N", help="pull request number (default: pull_request.number of GITHUB_EVENT_PATH)")
    p.add_argument("--author", action="append", default=[], metavar="LOGIN",
                   help=f"a login whose marker comment may be edited, besides {ACTIONS_BOT} (the token's user, "
                        "e.g. a GitHub App's `name[bot]`); repeatable")
    p.add_argument("--optional", action="store_true",
                   help="a token that may not comment (403: fork pull requests, no `pull-requests: write`) is a warning, exit 0")
    return p


def _warn(message: str, environ: Mapping[str, str]) -> None:
    if environ.get("GITHUB_ACTIONS") == "true":
        print(f"::warning title=reviewer comment::{escape_data(message)}", flush=True)
    else:
        print(f"{PROG}: warning: {message}", file=sys.stderr)


def _scrubbed(message: str, environ: Mapping[str, str]) -> str:
    """No message carries the token, even one a server echoed back."""
    token = environ.get("GITHUB_TOKEN", "").strip()
    return message.replace(token, "***") if token else message


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    args = build_parser().parse_args(argv)
    try:
        body = read_body(args.body)
        target = target_from(env, args.pr)
        outcome = publish(target, body, frozenset({ACTIONS_BOT, *args.author}))
    except PublishError as exc:
        if exc.forgivable and args.optional:
            _warn(_scrubbed(f"the review comment was not posted: {exc}", env), env)
            return 0
        print(f"{PROG}: {_scrubbed(str(exc), env)}", file=sys.stderr)
        return 2
    where = outcome.url or f"comment {outcome.comment_id}"
    if outcome.action == "unchanged":
        print(f"{PROG}: the review comment on #{target.number} is already up to date: {where}")
    else:
        print(f"{PROG}: {outcome.action} the review comment on #{target.number}: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
