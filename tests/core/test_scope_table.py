"""One scope table (core.scopes.SCOPE_TABLE): every other view of the scopes is derived from it."""
import ast
from pathlib import Path

from access import permissions, tokens
from access.permissions import ACTION_PERMISSIONS, Action
from api import permissions as api_permissions
from core import scopes
from core.scopes import SCOPE_TABLE

ROOT = Path(__file__).resolve().parents[2]
SOURCE_PACKAGES = ("access", "api", "backoffice", "cli", "core", "findings", "forge", "presentation", "reviews", "web")


def test_every_action_is_opened_by_exactly_one_scope_of_the_table():
    opened = [action for scope in SCOPE_TABLE for action in scope.actions]
    assert sorted(opened) == sorted(Action)
    assert len(opened) == len(set(opened))
    assert [scope.name for scope in SCOPE_TABLE] == list(scopes.SCOPES)


def test_the_access_layer_s_tables_are_the_scope_table_read_each_way():
    for scope in SCOPE_TABLE:
        assert scopes.SCOPES[scope.name] == scope.description
        for action in scope.actions:
            assert permissions.ACTION_SCOPES[Action(action)] == scope.name
        if scope.name == scopes.READ:
            assert scope.name not in tokens.SCOPE_ACTIONS
            continue
        assert tokens.SCOPE_ACTIONS[scope.name] == Action(scope.actions[0])
        assert permissions.ACTION_SCOPES[tokens.SCOPE_ACTIONS[scope.name]] == scope.name
        assert tokens.SCOPE_PERMISSIONS[scope.name] == ACTION_PERMISSIONS[Action(scope.actions[0])]
        assert scopes.SCOPE_AUDIT_ACTIONS[scope.name] == scope.audit_action


def test_the_api_names_a_refusal_by_the_table_s_audit_action():
    assert api_permissions.SCOPE_AUDIT_ACTIONS is scopes.SCOPE_AUDIT_ACTIONS
    assert not hasattr(api_permissions, "SCOPE_ACTIONS")


def _scope_keyed_dict_literals(path: Path) -> list[int]:
    """Line numbers of dict literals whose keys are scope names (as strings or as the core.scopes
    constants), or with three or more scope names as values: a scope table written by hand."""
    names = set(scopes.SCOPES)
    constants = {"READ", "VERIFY", "IMPORT", "RESOLVE", "SETTINGS", "REPORTS_WRITE"}
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Dict):
            continue
        keys = [
            key.value if isinstance(key, ast.Constant) else key.id if isinstance(key, ast.Name) else None
            for key in node.keys
        ]
        scope_keys = [key for key in keys if key in names or key in constants]
        scope_values = [value for value in node.values if isinstance(value, ast.Constant) and value.value in names]
        if (len(scope_keys) >= 2 and len(scope_keys) >= len(keys) - 1) or len(scope_values) >= 3:
            found.append(node.lineno)
    return found


def test_no_module_but_core_scopes_writes_a_scope_table_by_hand():
    written = {
        str(path.relative_to(ROOT)): lines
        for package in SOURCE_PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts and path != ROOT / "core" / "scopes.py"
        and (lines := _scope_keyed_dict_literals(path))
    }
    assert written == {}
