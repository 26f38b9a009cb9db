"""Every audit action is shown by its label, in the reader's language.

The actions are found in the code itself: each call of ``audit.record`` names its action,
as a string literal where it can. A new action without a label fails here; give it one in
its app's ``audit_actions.py`` (``ACTIONS``; the core collects them) and
its Arabic in the app's translation table.
"""

import ast
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from accounts.models import SecondFactorReset
from casefiles import audit
from casefiles.audit_actions import declared_actions

ROOT = Path(settings.BASE_DIR)
NOT_THE_APP = {"tests", "tools", "bench", "docs", "var", "migrations"}


def _review_moves() -> set[str]:
    from legal.review import TRANSITIONS

    return {f"review.{move.verb}" for move in TRANSITIONS.values()}


def _reset_decisions() -> set[str]:
    decided = set(SecondFactorReset.Outcome) - {
        SecondFactorReset.Outcome.PENDING,
        SecondFactorReset.Outcome.APPROVED,
    }
    # A reset that covers the password too is a recovery, recorded under its own name.
    return {
        f"auth.{kind}_{outcome}"
        for kind in ("2fa_reset", "password_recover")
        for outcome in decided
    }


def _wrong_code_actions() -> set[str]:
    return set(_literal_arguments(ROOT / "accounts" / "signin.py", "_wrong_code", 3))


def _custody_actions() -> set[str]:
    """The actions handed to ``record_custody`` (the one custody writer records them)."""
    found = set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "record_custody":
                (argument,) = [k.value for k in node.keywords if k.arg == "action"]
                for branch in _branches(argument):
                    assert isinstance(branch, ast.Constant), ast.unparse(node)
                    found.add(branch.value)
    return found


def _keyword_actions(function: str) -> set[str]:
    """The literal ``action=`` handed to every call of ``function`` in the code."""
    found = set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == function:
                for keyword in node.keywords:
                    if keyword.arg == "action":
                        assert isinstance(keyword.value, ast.Constant), ast.unparse(node)
                        found.add(keyword.value.value)
    return found


# Calls whose action is not written at the call: (file, the argument as written) -> the
# actions it can record, worked out from the code it depends on.
def _bulk_actions() -> set[str]:
    from legal.services.bulk_actions import ACTIONS

    return {action.verb for action in ACTIONS.values()}


def _incident_changes() -> set[str]:
    """The actions handed to incidents' ``_version_within`` (it records each change)."""
    path = ROOT / "incidents" / "services" / "incidents.py"
    return set(_literal_arguments(path, "_version_within", 2))


COMPUTED = {
    ("incidents/services/incidents.py", "change"): _incident_changes,
    ("legal/services/review.py", "f'review.{move.verb}'"): _review_moves,
    ("legal/services/bulk.py", "action.verb"): _bulk_actions,
    ("accounts/services/resets.py", "f'auth.{kind}_{outcome}'"): _reset_decisions,
    ("accounts/signin.py", "action"): _wrong_code_actions,
    ("evidence/custody_events.py", "action"): _custody_actions,
    ("people/services/identity.py", "action"): lambda: _keyword_actions("open_or_audit"),
}


def _sources():
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if parts[0].startswith(".") or NOT_THE_APP.intersection(parts):
            continue
        yield path


def _literal_arguments(path: Path, function: str, position: int):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == function:
            argument = node.args[position]
            assert isinstance(argument, ast.Constant), ast.unparse(node)
            yield argument.value


def _branches(node):
    if isinstance(node, ast.IfExp):
        yield from _branches(node.body)
        yield from _branches(node.orelse)
    else:
        yield node


def recorded_actions() -> dict[str, str]:
    """Each action the code base records -> where (file:line)."""
    found, unknown = {}, []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if not (
                isinstance(func, ast.Attribute)
                and func.attr == "record"
                and getattr(func.value, "id", None) == "audit"
            ):
                continue
            keyword = [k.value for k in node.keywords if k.arg == "action"]
            argument = node.args[1] if len(node.args) > 1 else keyword[0]
            for branch in _branches(argument):
                if isinstance(branch, ast.Constant):
                    found[branch.value] = f"{rel}:{node.lineno}"
                elif (rel, ast.unparse(branch)) in COMPUTED:
                    for action in COMPUTED[rel, ast.unparse(branch)]():
                        found[action] = f"{rel}:{node.lineno}"
                else:
                    unknown.append(f"{rel}:{node.lineno} {ast.unparse(branch)}")
    assert not unknown, (
        f"write these actions as string literals at the call, or add them to COMPUTED: {unknown}"
    )
    return found


def test_the_scan_finds_the_actions_of_every_app():
    actions = recorded_actions()
    assert {"case.view", "evidence.download", "people.reveal_identity"} <= set(actions)
    assert {"review.approve", "auth.2fa_reset_refused", "auth.enrolment_code_failed"} <= set(
        actions
    )


def test_every_action_the_code_records_has_a_label_in_english_and_arabic():
    actions = recorded_actions()
    unlabelled = {a: where for a, where in actions.items() if a not in declared_actions()}
    assert not unlabelled, (
        f"declare these actions with a label in their app's audit_actions.py: {unlabelled}"
    )
    untranslated = []
    for action in actions:
        with translation.override("en"):
            english = str(declared_actions()[action])
        with translation.override("ar"):
            if str(declared_actions()[action]) == english:
                untranslated.append(action)
    assert not untranslated, f"these labels have no Arabic: {untranslated}"


@pytest.mark.django_db
def test_an_admin_filters_the_audit_log_by_an_evidence_action_and_reads_its_label(client, cast):
    audit.record(cast.lawyer, "evidence.download", target=cast.lead, case=cast.case)
    audit.record(cast.lawyer, "case.view", target=cast.case, case=cast.case)
    client.force_login(cast.admin)
    response = client.get(reverse("casefiles:audit_list"), {"action": "evidence.download"})
    assert response.context["filter"].is_valid(), response.context["filter"].errors
    assert [e.action for e in response.context["page"]] == ["evidence.download"]
    html = response.content.decode()
    assert "Original downloaded" in html
    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    response = client.get(reverse("casefiles:audit_list"), {"action": "evidence.download"})
    html = response.content.decode()
    with translation.override("ar"):
        arabic = str(declared_actions()["evidence.download"])
    assert arabic != "Original downloaded" and arabic in html
    assert "Original downloaded" not in html


@pytest.mark.django_db
def test_the_page_of_who_saw_an_object_names_actions_in_the_readers_language(client, cast):
    audit.record(cast.lawyer, "case.view", target=cast.observer, case=cast.case)
    client.force_login(cast.lead)
    client.post(reverse("set_language"), {"language": "ar", "next": "/"})
    url = reverse(
        "casefiles:case_target_audit", args=[cast.case.reference, "auth.user", cast.observer.pk]
    )
    html = client.get(url).content.decode()
    with translation.override("ar"):
        assert str(declared_actions()["case.view"]) in html
    assert ">case.view<" not in html
