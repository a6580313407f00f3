from reviewer.engine.globs import literal_prefix, matches


def test_double_star_crosses_directories_and_may_match_none() -> None:
    assert matches("packages/core/src/session/x.ts", ["packages/core/src/session/**"])
    assert matches("packages/core/src/session/a/b/x.ts", ["packages/core/src/session/**"])
    assert matches("snapshot.json", ["**/snapshot.json"])
    assert matches("drizzle/20260101_init/snapshot.json", ["**/snapshot.json"])
    assert not matches("packages/core/src/sessions/x.ts", ["packages/core/src/session/**"])


def test_single_star_and_question_mark_stay_in_one_component() -> None:
    assert matches("src/sql.ts", ["src/*.ts"]) and not matches("src/a/sql.ts", ["src/*.ts"])
    assert matches("m1.ts", ["m?.ts"]) and not matches("m/.ts", ["m?.ts"])
    assert not matches("src/a.tsx", ["src/*.ts"])  # anchored at the end
    assert not matches("src/a+b.ts", ["src/a.b.ts"]) and matches("src/a+b.ts", ["src/a+b.ts"])


def test_literal_prefix() -> None:
    assert literal_prefix("packages/core/src/**/*.sql.ts") == "packages/core/src/"
    assert literal_prefix("**/snapshot.json") == ""
    assert literal_prefix("packages/core/schema.json") == "packages/core/"
