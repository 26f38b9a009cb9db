"""Every write is a service that commits in its own durable transaction, its audit entry
inside: the public functions of the services packages open ``transaction.atomic`` with
``durable=True`` (Django then refuses to run them inside another transaction, which
would hold their commit, and their audit entry, hostage to a caller). Helpers meant to
run inside a transaction already open are named ``*_within`` or start with ``_``."""

import ast
from pathlib import Path

from django.apps import apps
from django.conf import settings

ROOT = Path(settings.BASE_DIR)


def _project_apps() -> list[str]:
    """The installed apps of the project itself (not Django's, nor third parties')."""
    return sorted(
        Path(config.path).name
        for config in apps.get_app_configs()
        if Path(config.path).parent == ROOT
    )


def _service_packages() -> list[str]:
    """The services package of every app of the project that has one: found, not
    listed, so a new app's services are checked without editing this file."""
    return [f"{app}/services" for app in _project_apps() if (ROOT / app / "services").is_dir()]


PACKAGES = _service_packages()


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
        for path in sorted((ROOT / package).rglob("*.py")):
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
    them (decision 0007). Migrations are generated and exempt; so is the package's
    verifier, which must stay one standard-library file a court runs alone (0015)."""
    standalone = {"disclosure/verifier.py"}
    long = []
    for package in ["athar", *_project_apps()]:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts and len(path.read_text().splitlines()) > 600:
                if str(path.relative_to(ROOT)) not in standalone:
                    long.append(str(path.relative_to(ROOT)))
    assert not long, f"split these by concern: {sorted(long)}"


def test_every_services_package_is_checked():
    """Each app's services package is checked once, the apps that came last included."""
    on_disk = sorted(
        p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("*/services/__init__.py")
    )
    assert PACKAGES == on_disk
    assert {"legal/services", "missing/services", "places/services"} <= set(PACKAGES)
