"""Every write is a service that commits in its own durable transaction, its audit entry
inside: the public functions of the services packages open ``transaction.atomic`` with
``durable=True`` (Django then refuses to run them inside another transaction, which
would hold their commit, and their audit entry, hostage to a caller). Helpers meant to
run inside a transaction already open are named ``*_within`` or start with ``_``."""

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PACKAGES = (
    "accounts/services",
    "casefiles/services",
    "disclosure/services",
    "evidence/services",
    "people/services",
    "evidence/services",
    "people/services",
    "vocabularies/services",
    "incidents/services",
)


def _outermost_atomics(function: ast.FunctionDef):
    """The ``with transaction.atomic(...)`` blocks of ``function`` not inside another."""

    def walk(node, inside):
        for child in ast.iter_child_nodes(node):
            is_atomic = isinstance(child, ast.With) and any(
                isinstance(item.context_expr, ast.Call)
                and ast.unparse(item.context_expr.func) == "transaction.atomic"
                for item in child.items
            )
            if is_atomic and not inside:
                yield child
            yield from walk(child, inside or is_atomic)

    yield from walk(function, False)


def _durable(block: ast.With) -> bool:
    call = block.items[0].context_expr
    return any(
        k.arg == "durable" and getattr(k.value, "value", None) is True for k in call.keywords
    )


def test_public_services_write_in_durable_transactions():
    found, not_durable = 0, []
    for package in PACKAGES:
        for path in sorted((ROOT / package).glob("*.py")):
            for node in ast.parse(path.read_text()).body:
                if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                    continue
                if node.name.endswith("_within"):
                    continue
                for block in _outermost_atomics(node):
                    found += 1
                    if not _durable(block):
                        not_durable.append(f"{path.relative_to(ROOT)}:{block.lineno} {node.name}")
    assert found > 25
    assert not not_durable, f"open these with transaction.atomic(durable=True): {not_durable}"


def test_no_product_module_grows_past_600_lines():
    """A module past that holds more than one concern: split it into modules named after
    them (decision 0007). Migrations are generated and exempt."""
    long = []
    for package in (
        "athar",
        "accounts",
        "casefiles",
        "demo",
        "disclosure",
        "evidence",
        "legal",
        "people",
        "search",
        "vocabularies",
        "places",
        "incidents",
    ):
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts and len(path.read_text().splitlines()) > 600:
                long.append(str(path.relative_to(ROOT)))
    assert not long, f"split these by concern: {sorted(long)}"
