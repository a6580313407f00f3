"""dependency-direction: what the family declares, its options and its checks.

Everything the configuration, `reviewer rules` and `--explain` read about the
family; nothing here runs during a review. The defaults are opencode's own rule
(AGENTS.md): "Keep runtime dependencies directed from Schema to Core and
Protocol, then from Core and Protocol to Server. Client runtime code may depend
on Schema and Protocol but never Core or Server; `sdk-next` composes Client,
Core, and Server."
"""

from __future__ import annotations

from reviewer.engine.api import CheckSpec, Kind, Option, parse_error_check
from reviewer.report.model import Impact, Severity

FAMILY_ID = "dependency-direction"

# The runtime code of each V2 package is its `src/`: tests and build scripts
# (packages/client/test, packages/client/script) may read Server's API.
_LAYERS = [
    "schema: packages/schema/src/**, @opencode-ai/schema",
    "core: packages/core/src/**, @opencode-ai/core",
    "protocol: packages/protocol/src/**, @opencode-ai/protocol",
    "server: packages/server/src/**, @opencode-ai/server",
    "client: packages/client/src/**, @opencode-ai/client",
    "sdk-next: packages/sdk-next/src/**, @opencode-ai/sdk-next",
]

_ALLOWED = [
    "core -> schema",
    "protocol -> schema",
    "server -> core, protocol, schema",
    "client -> schema, protocol",
    "sdk-next -> client, core, server, protocol, schema",
]

TYPE_IMPORTS_ALLOWED = "allowed"
TYPE_IMPORTS_CHECKED = "checked"

OPTIONS: tuple[Option, ...] = (
    Option(
        "layers",
        _LAYERS,
        Kind.NAMES,
        "The layers, one per entry: `<layer>: <member>, <member>…`. A member holding a `/` and not starting "
        "with `@` is a path glob (`**` crosses directories) of the layer's files; any other member is a package "
        "name (`@scope/name` or `name`), covering its subpaths (`@opencode-ai/core/session`). A layer without "
        "path globs owns the production files of its workspace packages (not their tests or scripts). When "
        "neither `layers` nor `allowed` is configured and the defaults name no workspace package, the graph is "
        "the one the workspace's package.json manifests declare: one layer per package, an edge per declared "
        "workspace dependency.",
    ),
    Option(
        "allowed",
        _ALLOWED,
        Kind.NAMES,
        "Allowed edges, one entry per importing layer: `<layer> -> <layer>, <layer>…`. A layer may always "
        "import itself; a layer with no entry may import no other layer. Files and packages in no layer are "
        "not constrained either way.",
    ),
    Option(
        "type_imports",
        TYPE_IMPORTS_ALLOWED,
        Kind.TEXT,
        "`allowed`: `import type` / `export type` vanish at run time and may cross layers; `checked`: they are "
        "judged like runtime imports (reported as `type-import`).",
    ),
)

_BAD_VIOLATION = (
    '// packages/client/src/promise/session.ts\n'
    'import { Prompt } from "@opencode-ai/core/session/prompt"   // client -> core: never'
)
_GOOD_VIOLATION = (
    '// packages/client/src/promise/session.ts\n'
    'import { Prompt } from "@opencode-ai/schema/prompt"         // client -> schema: allowed'
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/layer-violation",
        severity=Severity.MUST_FIX,
        impact=Impact.HYGIENE,
        title="Runtime import against the layer graph",
        summary=(
            "A runtime import of a file in one layer loads a module of a layer it may not depend on: a static "
            "`import`, a re-export (`export * from`, `export { x } from`), `import x = require()`, a dynamic "
            "`import(\"x\")` or `require(\"x\")`, `import.meta.require(\"x\")`, or the `require` node's `createRequire(..)` "
            "makes, in TypeScript or JavaScript (`.js`, `.mjs`, `.cjs`; build output such as `dist/` aside). Relative paths, workspace package names and their `exports` "
            "maps, package `imports` (`#x`) and simple tsconfig `paths` are resolved."
        ),
        why=(
            "The layer graph is what keeps the lower layers usable on their own: Schema and Protocol ship to "
            "clients, Core runs without the HTTP server, and a Client must load without Core's database, "
            "filesystem and provider code. One runtime import against the direction drags the forbidden layer's "
            "whole module graph into the importer at load time (side effects, Node-only APIs, a cycle between "
            "packages), and every later change of that layer can break the importer."
        ),
        bad=_BAD_VIOLATION,
        good=_GOOD_VIOLATION,
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/type-specifier-import",
        severity=Severity.SHOULD_FIX,
        impact=Impact.HYGIENE,
        title="Type-only specifiers still load the module",
        summary=(
            "An `import { type A, type B } from \"x\"` (or `export { type A } from`) whose every specifier is a "
            "type crosses the layer graph: with `verbatimModuleSyntax` (on in `@tsconfig/bun`, which the "
            "opencode packages extend) TypeScript keeps it as `import {} from \"x\"`, which loads the module."
        ),
        why=(
            "`import type` is erased; inline `type` markers are not: the statement survives with an empty "
            "clause and runs the other layer's module for its side effects. Writing `import type { A, B }` "
            "makes the intent (types only) true at run time."
        ),
        bad='import { type SessionV2 } from "@opencode-ai/core/session"   // in packages/client/src',
        good='import type { SessionV2 } from "@opencode-ai/core/session"   // erased at run time',
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/type-import",
        severity=Severity.SHOULD_FIX,
        impact=Impact.HYGIENE,
        title="Type-only import against the layer graph",
        summary=(
            "Only with `type_imports = \"checked\"`: an `import type` / `export type` of a layer the importer may "
            "not depend on."
        ),
        why=(
            "Types vanish at run time, but a code base may still want its types to flow one way only (a Client "
            "whose public types name Core's internals cannot be built without Core)."
        ),
        bad='import type { SessionV2 } from "@opencode-ai/core/session"   // in packages/client/src',
        good='import type { SessionInfo } from "@opencode-ai/schema/session"',
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/unresolved-import",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title="Import the reviewer cannot place in a layer",
        summary=(
            "An import of a file in a constrained layer could not be resolved (a computed `import(x)` / "
            "`require(x)`, a path alias no tsconfig `paths` maps, a workspace package subpath its `exports` do "
            "not name, a relative path above the repository root), so whether it crosses the layer graph was "
            "not checked."
        ),
        why=(
            "Never green by silence: an import the reviewer cannot place might load a forbidden layer. The note "
            "names the import so a reviewer can check it by hand."
        ),
        bad="const mod = await import(target)   // target computed at run time",
        good='const mod = await import("./local")',
    ),
    parse_error_check(
        FAMILY_ID,
        "Unparsed region with an import in a layered file",
        "A region that mentions `import`, `export` or `require` did not parse (tree-sitter ERROR) outside the "
        "patch's changes; imports inside it were not checked.",
        "An import hidden in a region the parser could not read is an import the family never judged.",
    ),
)
