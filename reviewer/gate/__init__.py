"""The integrity gate: inputs proven before any rule runs."""
