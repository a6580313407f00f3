"""dependency-direction: the layer graph, resolution helpers, import sites, and whole reviews on real repositories."""

from __future__ import annotations

import io
import tomllib
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from gitrepo import Repo, make_change
from reviewer import cli, review
from reviewer.rules.dependency_direction.layers import LayerConfigError, parse_graph
from reviewer.rules.dependency_direction.sites import RUNTIME, TYPE_ONLY, TYPE_SPECIFIERS, sites, understood_errors
from reviewer.rules.dependency_direction.spec import OPTIONS
from reviewer.rules.dependency_direction.workspace import _lookup, strip_jsonc
from reviewer.typescript import Program

FIXTURES = Path(__file__).parent / "fixtures" / "rules" / "dependency-direction" / "_shared"
DEFAULTS = {o.name: o.default for o in OPTIONS}


def _graph(layers=None, allowed=None):
    return parse_graph(tuple(layers or DEFAULTS["layers"]), tuple(allowed or DEFAULTS["allowed"]))


# ------------------------------------------------------------------ the graph


def test_default_graph_is_opencodes_rule() -> None:
    graph = _graph()
    assert graph.allowed("client", "schema") and graph.allowed("client", "protocol")
    assert not graph.allowed("client", "core") and not graph.allowed("client", "server")
    assert graph.allowed("server", "core") and not graph.allowed("core", "server")
    assert not graph.allowed("schema", "core") and graph.allowed("schema", "schema")
    assert set(graph.forbidden_from("client")) == {"core", "server", "sdk-next"}
    assert graph.forbidden_from("sdk-next") == ()


def test_membership_by_path_glob_and_package_name() -> None:
    graph = _graph()
    assert graph.of_path("packages/client/src/promise/api.ts", {}) == "client"
    assert graph.of_path("packages/client/test/api.test.ts", {}) is None  # tests are not runtime code
    assert graph.of_package("@opencode-ai/core/session/prompt") == "core"
    assert graph.of_package("@opencode-ai/core") == "core"
    assert graph.of_package("@opencode-ai/core-extra") is None  # a name prefix is not a subpath


def test_a_layer_without_globs_owns_its_package_folders() -> None:
    graph = _graph(["app: @acme/app", "lib: libs/**"], ["app -> lib"])
    assert graph.of_path("apps/web/src/main.ts", {"@acme/app": "apps/web"}) == "app"
    assert graph.of_path("apps/webby/main.ts", {"@acme/app": "apps/web"}) is None


@pytest.mark.parametrize(
    ("layers", "allowed", "says"),
    [
        (["core packages/core/**"], [], "is not `<layer>:"),
        (["core: packages/core/**", "core: packages/x/**"], [], "declared twice"),
        (["core: packages/core/**"], ["core => schema"], "is not `<layer> ->"),
        (["core: packages/core/**"], ["core -> schema"], "undeclared layer(s): schema"),
    ],
)
def test_malformed_configuration_is_refused(layers: list[str], allowed: list[str], says: str) -> None:
    with pytest.raises(LayerConfigError, match=None) as raised:
        parse_graph(tuple(layers), tuple(allowed))
    assert says in str(raised.value)


# ------------------------------------------------------------------ resolution helpers


def test_exports_lookup_follows_node_rules() -> None:
    table = {
        "./session/runner": "./src/session/runner/index.ts",
        "./*": "./src/*.ts",
        "./session/*": {"types": "./types/*.d.ts", "bun": "./src/session/*.ts"},
    }
    assert _lookup(table, "./session/runner") == "./src/session/runner/index.ts"  # exact key first
    assert _lookup(table, "./session/prompt") == "./src/session/prompt.ts"  # longest prefix; `types` last
    assert _lookup(table, "./util") == "./src/util.ts"
    assert _lookup({"./api": "./src/api.ts"}, "./internal") is None
    assert _lookup(None, "./x") is None


def test_jsonc_keeps_strings_and_drops_comments_and_trailing_commas() -> None:
    text = '{\n  // a comment\n  "paths": { "@/*": ["./src/*",], "u": "http://x/*y*/" }, /* block */\n}'
    assert strip_jsonc(text).replace(" ", "").replace("\n", "") == '{"paths":{"@/*":["./src/*"],"u":"http://x/*y*/"}}'


# ------------------------------------------------------------------ sites


def _sites(text: str):
    program = Program(lambda path: text if path == "a.ts" else None, {"a.ts": range(1, 100)})
    module = program.module("a.ts")
    return module, sites(module)


def test_sites_read_every_kind_with_its_mode() -> None:
    module, found = _sites(
        'import type { A } from "t"\n'
        'import { type B, type C } from "s"\n'
        'import { type D, e } from "m"\n'
        'import "side"\n'
        'export * from "r"\n'
        'export type * from "rt"\n'
        'import x = require("ir")\n'
        'const d = await import("dyn")\n'
        'const q = require(name)\n'
        'declare module "amb" { import { Z } from "inside" }\n'
        'type T = typeof import("typeonly")\n'
    )
    got = [(s.kind, s.specifier, s.mode, s.line) for s in found]
    assert got == [
        ("import", "t", TYPE_ONLY, 1),
        ("import", "s", TYPE_SPECIFIERS, 2),
        ("import", "m", RUNTIME, 3),
        ("import", "side", RUNTIME, 4),
        ("export", "r", RUNTIME, 5),
        ("export", "rt", TYPE_ONLY, 6),
        ("import-require", "ir", RUNTIME, 7),
        ("dynamic-import", "dyn", RUNTIME, 8),
        ("require", None, RUNTIME, 9),
    ]
    assert understood_errors(module) == frozenset({6})


def test_a_multi_line_import_is_one_site_spanning_its_lines() -> None:
    _, found = _sites('import {\n  a,\n  b,\n} from "x"\n')
    _, one_line = _sites('import { a, b, }   from "x" // reformatted\n')
    assert [(s.line, s.end_line) for s in found] == [(1, 4)]
    assert found[0].normalized == one_line[0].normalized  # anchors survive reformatting


# ------------------------------------------------------------------ whole reviews


def _shared() -> dict[str, bytes]:
    return {str(p.relative_to(FIXTURES)): p.read_bytes() for p in FIXTURES.rglob("*") if p.is_file()}


def _review(tmp_path: Path, base_extra: dict, patched_extra: dict):
    base = {**_shared(), **base_extra}
    repo, base_sha, patch, _ = make_change(tmp_path, base, {**base, **patched_extra})
    outcome = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch)))
    return next(i for i in outcome.report.invariants if i.id == "dependency-direction")


CLIENT_TYPE_IMPORT = {
    "packages/client/src/types.ts": 'import type { Prompt } from "@opencode-ai/core/session/prompt"\nexport type P = typeof Prompt\n'
}


def test_type_imports_pass_by_default(tmp_path: Path) -> None:
    invariant = _review(tmp_path, {}, CLIENT_TYPE_IMPORT)
    assert invariant.status.value == "verified"
    assert "1 type-only import of a forbidden layer" in invariant.summary


def test_type_imports_checked_when_configured(tmp_path: Path) -> None:
    config = {"reviewer.toml": '[rules.dependency-direction]\ntype_imports = "checked"\n'}
    invariant = _review(tmp_path, config, CLIENT_TYPE_IMPORT)
    assert [(f.rule, f.location.line) for f in invariant.findings] == [("dependency-direction/type-import", 1)]


def test_a_malformed_graph_fails_closed(tmp_path: Path) -> None:
    config = {"reviewer.toml": '[rules.dependency-direction]\nallowed = ["client -> nowhere"]\n'}
    invariant = _review(tmp_path, config, CLIENT_TYPE_IMPORT)
    assert invariant.status.value == "error"


def test_not_applicable_says_what_it_looked_for(tmp_path: Path) -> None:
    invariant = _review(tmp_path, {}, {"packages/ai/src/other.ts": 'import { cors } from "@opencode-ai/server/cors"\n'})
    assert invariant.status.value == "not-applicable"
    assert "no changed TypeScript file in a layer" in invariant.summary and "packages/client/src/**" in invariant.summary


def test_a_patch_cannot_rename_an_existing_package_to_dodge_the_graph(tmp_path: Path) -> None:
    renamed = b'{ "name": "@elsewhere/server", "exports": { "./cors": "./src/cors.ts" } }\n'
    invariant = _review(tmp_path, {}, {
        "packages/server/package.json": renamed,
        "packages/client/src/cors.ts": 'import { cors } from "@opencode-ai/server/cors"\nexport const c = cors\n',
    })
    assert [(f.rule, f.location.line) for f in invariant.findings] == [("dependency-direction/layer-violation", 1)]


def test_an_unparsed_import_on_a_changed_line_is_an_error(tmp_path: Path) -> None:
    invariant = _review(tmp_path, {}, {
        "packages/client/src/broken.ts": 'import { a, from "@opencode-ai/core/session/prompt"\nexport const b = a\n',
    })
    assert invariant.status.value == "error"
    assert "does not parse" in invariant.summary


# ------------------------------------------------------------------ the graph a workspace declares

DECLARED = Path(__file__).parent / "fixtures" / "rules" / "dependency-direction" / "declared-workspace" / "base"


def _declared_base() -> dict[str, bytes]:
    return {str(p.relative_to(DECLARED)): p.read_bytes() for p in DECLARED.rglob("*") if p.is_file()}


def _declared_review(tmp_path: Path, patched_extra: dict, base_extra: dict | None = None):
    base = {**_declared_base(), **(base_extra or {})}
    repo, base_sha, patch, _ = make_change(tmp_path, base, {**base, **patched_extra})
    outcome = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch)))
    return next(i for i in outcome.report.invariants if i.id == "dependency-direction")


def test_without_configuration_the_manifests_are_the_graph(tmp_path: Path) -> None:
    invariant = _declared_review(tmp_path, {
        "packages/dashboard/src/ok.ts": 'import { decode } from "@beacon/wire"\nexport const d = decode\n',
    })
    assert invariant.status.value == "verified", invariant.summary
    assert "the workspace's package.json dependencies" in invariant.summary
    assert "1 cross to another layer" in invariant.summary


def test_a_dependency_the_patch_declares_without_a_cycle_is_an_edge(tmp_path: Path) -> None:
    manifest = (DECLARED / "packages/dashboard/package.json").read_text().replace(
        '"@beacon/wire": "workspace:*"', '"@beacon/wire": "workspace:*",\n    "@beacon/collector": "workspace:*"')
    invariant = _declared_review(tmp_path, {
        "packages/dashboard/package.json": manifest,
        "packages/dashboard/src/live.ts": 'import { drain } from "@beacon/collector"\nexport const d = drain\n',
    })
    assert invariant.status.value == "verified", invariant.summary


def test_a_configured_graph_replaces_the_declared_one(tmp_path: Path) -> None:
    config = {"reviewer.toml": '[rules.dependency-direction]\nlayers = ["ui: packages/dashboard/src/**"]\nallowed = []\n'}
    invariant = _declared_review(tmp_path, {
        "packages/dashboard/src/live.ts": 'import { drain } from "@beacon/collector"\nexport const d = drain\n',
    }, config)
    assert invariant.status.value == "verified", invariant.summary  # collector is in no configured layer
    assert "workspace's package.json" not in invariant.summary


def test_a_single_package_declares_no_graph(tmp_path: Path) -> None:
    base = {"package.json": '{ "name": "solo" }\n', "src/a.ts": "export const a = 1\n"}
    repo, base_sha, patch, _ = make_change(tmp_path, base, {**base, "src/b.ts": 'import { a } from "./a"\nexport const b = a\n'})
    outcome = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch)))
    invariant = next(i for i in outcome.report.invariants if i.id == "dependency-direction")
    assert invariant.status.value == "not-applicable"
    assert "no workspace of two or more packages declares one" in invariant.summary


def _init(tmp_path: Path, tree: dict[str, bytes]) -> str:
    repo = Repo(tmp_path / "repo")
    repo.commit(tree, "base")
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["init", "--repo", str(repo.path), "--base", "HEAD"]) == 0
    return out.getvalue()


def test_init_proposes_the_declared_graph_and_it_loads_as_the_same_graph(tmp_path: Path) -> None:
    text = _init(tmp_path, _declared_base())
    rules = tomllib.loads(text)["rules"]["dependency-direction"]
    assert sorted(rules["layers"]) == ["@beacon/collector: @beacon/collector", "@beacon/dashboard: @beacon/dashboard",
                                       "@beacon/wire: @beacon/wire"]
    assert rules["allowed"] == ["@beacon/collector -> @beacon/wire", "@beacon/dashboard -> @beacon/wire",
                                "@beacon/wire -> @beacon/wire"]
    assert "packages/collector/package.json:6 `@beacon/collector` declares `@beacon/wire`" in text
    graph = parse_graph(tuple(rules["layers"]), tuple(rules["allowed"]))
    assert graph.allowed("@beacon/dashboard", "@beacon/wire") and not graph.allowed("@beacon/dashboard", "@beacon/collector")


def test_init_leaves_opencodes_graph_to_the_defaults(tmp_path: Path) -> None:
    assert "dependency-direction" not in tomllib.loads(_init(tmp_path, _shared())).get("rules", {})
