"""The words inference reads columns by: time-like columns, and keys of a group of entities."""

from __future__ import annotations

import pytest

from reviewer.rules._vocabulary import is_group_key, is_time_column


@pytest.mark.parametrize("name", ["valid_until", "expiresAt", "lease_expires_at", "last_seen", "lockedAt", "ttl"])
def test_time_columns(name: str) -> None:
    assert is_time_column(name)


@pytest.mark.parametrize("name", ["status", "attempts", "owner_id", "seen_count"])
def test_not_time_columns(name: str) -> None:
    assert not is_time_column(name)


@pytest.mark.parametrize(("name", "table"), [
    ("shard_id", None), ("shardId", "mailbox"), ("shardIds", None), ("shard_idx", None), ("shard_id_v2", None),
    ("tenantID", None), ("tenant_ref", None), ("owner_id", "run_lease"), ("workspaceId", "session"),
    ("node_id", "jobs"),
])
def test_group_keys(name: str, table: str | None) -> None:
    assert is_group_key(name, table)


@pytest.mark.parametrize(("name", "table"), [
    ("id", None), ("session_id", None), ("entityId", "mailbox"), ("run_id", "run_lease"), ("jobId", None),
    ("node_id", "workflow_node"), ("queueId", "job_queues"), ("orgId", "orgs"),
])
def test_entity_keys_are_not_group_keys(name: str, table: str | None) -> None:
    assert not is_group_key(name, table)
