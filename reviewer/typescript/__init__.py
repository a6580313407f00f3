"""The TypeScript model: what rules ask about patched (and base) source.

Rules import only from here; tree-sitter nodes never leave the package.
"""

from reviewer.typescript.model import Call, Callback, Expr, Function, Invocation
from reviewer.typescript.module import Import, Module
from reviewer.typescript.program import Program
from reviewer.typescript.roles import DEFAULT_ROLES, Role, RoleTable

__all__ = [
    "Call",
    "Callback",
    "DEFAULT_ROLES",
    "Expr",
    "Function",
    "Import",
    "Invocation",
    "Module",
    "Program",
    "Role",
    "RoleTable",
]
