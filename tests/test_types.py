"""Users, actors and cases are typed as what they are: mypy (``make types``, part of
``make test``) then checks every call that hands one over. A parameter of that name
typed ``Any`` would let anything through unseen."""

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PACKAGES = (
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
)
NAMED = {"actor", "user", "case", "subject", "approver", "asker", "grantee", "author"}


def test_no_user_actor_or_case_parameter_is_typed_any():
    loose = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                for argument in arguments:
                    if argument.arg in NAMED and argument.annotation is not None:
                        if ast.unparse(argument.annotation) == "Any":
                            where = f"{path.relative_to(ROOT)}:{node.lineno}"
                            loose.append(f"{where} {node.name}({argument.arg})")
    assert not loose, f"type these as Account, Account | None or Case: {loose}"
