"""regression-evidence's declarations: its options and the documentation of each check.

What `reviewer rules`, `--explain`, configuration and docs/rules read.
"""

from __future__ import annotations

from reviewer.report.model import Impact, Severity
from reviewer.engine.api import CheckSpec, Kind, Option, parse_error_check

FAMILY_ID = "regression-evidence"

OPTIONS: tuple[Option, ...] = (
    Option(
        "test_globs",
        ["**/*.test.*", "**/*.spec.*", "**/test/**", "**/tests/**", "**/__tests__/**"],
        Kind.GLOBS,
        "Test files: a changed file under these globs is a test the patch changed; other changed files are production code.",
    ),
    Option(
        "test_cases",
        ["it", "it.effect", "it.live", "it.scoped", "it.scopedLive", "it.only", "it.instance", "test", "test.only"],
        Kind.NAMES,
        "Calls that declare one test case; the nearest changed one is named as the related location.",
        vocabulary=False,  # generic words (language, library), not this code base's idioms:
        # present in any code base, and a whole-tree grep for them costs seconds
    ),
    Option(
        "guard_hooks",
        ["interruptedCommit", "terminalCommit"],
        Kind.NAMES,
        "Commit-hook properties whose changed body is a guard (the write that commits an interruption or a terminal step).",
        vocabulary=True,
    ),
    Option(
        "cas_tables",
        ["SessionInputTable", "SessionExecutionTable"],
        Kind.NAMES,
        "Tables whose `update(T)...where(...)` predicate is a compare-and-set guard when the patch changes it.",
        vocabulary=True,
    ),
    Option(
        "renew",
        ["SessionExecutionClaim.renew", "SessionExecutionClaim.update"],
        Kind.NAMES,
        "Lease renewals: a changed schedule of a repeated renewal is a guard.",
        vocabulary=True,
    ),
    Option(
        "repeat",
        ["Effect.repeat", "Effect.schedule", "Effect.repeatOrElse"],
        Kind.NAMES,
        "Combinators that repeat an effect on a schedule (a heartbeat's loop).",
    ),
    Option(
        "max_depth",
        4,
        Kind.INTEGER,
        "How many calls deep a function a test calls may reach the code of a finding or guard.",
    ),
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/untested-finding",
        severity=Severity.SHOULD_FIX,
        impact=Impact.HYGIENE,
        title="No regression test exercises the code of a must-fix finding",
        summary=(
            "A must-fix finding of another family sits in production code whose module no test changed by the "
            "patch imports, or loads through the modules it imports, so no changed test can run it."
        ),
        why=(
            "A fix for a crash-safety defect needs a test that runs the production path, or the defect comes back "
            "unnoticed. A test that drives a test-local stand-in (an `Effect.never` run handed to the executor) "
            "passes whatever the production commit hook does, so it proves nothing about the finding."
        ),
        bad=(
            "// runner/llm.ts (must-fix: the claim is released in the interruption commit)\n"
            "interruptedCommit: () => SessionExecutionClaim.clear(db, claim),\n"
            "// test/session-execution-local.test.ts: the only test the patch changed\n"
            "const execution = yield* SessionExecutionLocal.make({ db, ownerID, run: () => Effect.never })"
        ),
        good=(
            "// test/session-runner-llm.test.ts drives the production runner\n"
            "import { SessionRunnerLLM } from \"../src/session/runner/llm\"\n"
            "const runner = SessionRunnerLLM.make({ db, events, stream, executeTool })\n"
            "yield* runner.run(claim).pipe(Effect.fork, Effect.flatMap(Fiber.interrupt))"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/untested-guard",
        severity=Severity.SHOULD_FIX,
        impact=Impact.HYGIENE,
        title="No regression test exercises a changed recovery guard",
        summary=(
            "The patch changes a guard the families recognise (a commit hook, a compare-and-set `where`, a lease "
            "renewal schedule) and no test it changed imports the module around it or loads it through its imports."
        ),
        why=(
            "These guards are what keep a crash or a cancellation from duplicating or losing work, and their "
            "failures only show under races and restarts that review cannot replay. A changed guard without a test "
            "that runs it is a change nobody has seen work."
        ),
        bad=(
            "// input.ts: the re-arm no longer excludes promoted rows, and no test changed by the patch calls it\n"
            "db.update(SessionInputTable).set({ wake_pending: true }).where(eq(SessionInputTable.id, id))"
        ),
        good=(
            "// test/session-input.test.ts, changed by the same patch\n"
            "import { SessionInput } from \"../src/session/input\"\n"
            "yield* SessionInput.redriveRecoveries(db)\n"
            "expect(yield* promotedRow).toMatchObject({ wake_pending: false })"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/exercise-unproven",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title="A changed test imports the module but is not shown to run the code",
        summary=(
            "A test the patch changed imports the module holding a must-fix finding or a changed guard but refers "
            "only to declarations the reviewer cannot follow to the code, or loads the module only through other "
            "modules (or an entry point it spawns)."
        ),
        why=(
            "Integration tests often reach production code through a registry or a service layer built "
            "elsewhere (a tool looked up by its name, a layer composed by the app), which the model cannot "
            "follow. Calling such a test a missing regression would be a false alarm, and calling it a proof "
            "would be green by silence, so the note names the test and what it does refer to, for a reviewer to "
            "confirm by hand."
        ),
        bad=(
            "// test/tools.test.ts: imports the module, but reaches the tool only through the registry\n"
            "import \"../src/tool/bash\"\n"
            "yield* ToolRegistry.run(\"bash\", { command: \"true\" })"
        ),
        good=(
            "// the test calls the production function that holds the change\n"
            "import { BashTool } from \"../src/tool/bash\"\n"
            "yield* BashTool.execute({ command: \"true\" })"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/exercise-unresolved",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title="Whether a changed test exercises the code could not be decided",
        summary=(
            "A changed test imports a module the reviewer cannot resolve (a workspace package name without a "
            "matching `package.json` export), so whether it reaches the finding or guard is unknown."
        ),
        why=(
            "Never green by silence: an import the model cannot follow may be the one that runs the production "
            "path, or may not. The note names the import so a reviewer can check by hand."
        ),
        bad=(
            "// test/input.test.ts: the package has no matching export, so its file is unknown\n"
            "import { SessionInput } from \"@opencode-ai/core/session/internal\""
        ),
        good=(
            "// an import the workspace resolves (a relative path, or a package export that exists)\n"
            "import { SessionInput } from \"../src/session/input\""
        ),
    ),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code in a changed test",
        summary="The TypeScript parser left an ERROR region in a changed test file, so calls there were not read.",
        why="Rules run on the partial tree; a call to production code inside an ERROR region is invisible to them.",
    ),
)
