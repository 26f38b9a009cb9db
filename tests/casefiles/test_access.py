import ast
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import Http404
from django.utils import timezone

from casefiles import services
from casefiles.access import (
    ADMIN_ACTIONS,
    ROLE_ACTIONS,
    Action,
    Role,
    can,
    get_case_for_user,
)
from casefiles.models import AuditEntry, Case, Membership
from tests.factories import CaseFactory, MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

ALL_ACTIONS = sorted(v for k, v in vars(Action).items() if k.isupper())

# The matrix users rely on, written out by hand (not derived from the code under test).
EXPECTED = {
    "lead": set(ALL_ACTIONS) - {Action.VIEW_AUDIT},
    "investigator": {
        Action.VIEW_CASE,
        Action.VIEW_MEMBERS,
        Action.ADD_EVIDENCE,
        Action.DOWNLOAD_ORIGINAL,
        Action.RECORD_CUSTODY,
        Action.ADD_PEOPLE,
        Action.REVEAL_IDENTITY,
        Action.ADD_TESTIMONY,
    },
    "lawyer": {
        Action.VIEW_CASE,
        Action.VIEW_MEMBERS,
        Action.DOWNLOAD_ORIGINAL,
        Action.REVIEW,
        Action.APPROVE,
        Action.EXPORT,
    },
    "observer": {Action.VIEW_CASE, Action.VIEW_MEMBERS},
    "outsider": set(),
    # A system admin manages access and reads the log, but reads no case content.
    "admin": {Action.MANAGE_MEMBERS, Action.VIEW_AUDIT},
}


@pytest.mark.parametrize("who", list(EXPECTED))
@pytest.mark.parametrize("action", ALL_ACTIONS)
def test_role_action_matrix(cast, who, action):
    assert can(getattr(cast, who), action, cast.case) is (action in EXPECTED[who])


def test_matrix_covers_every_role():
    assert set(ROLE_ACTIONS) == set(Role.values)
    assert ADMIN_ACTIONS == EXPECTED["admin"]


def _product_sources():
    root = Path(settings.BASE_DIR)
    skip = {"tests", "tools", "bench", "docs", "var", "migrations"}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if not parts[0].startswith(".") and not skip.intersection(parts):
            yield path


def test_every_declared_action_is_asked_somewhere():
    """An action the matrix grants but no page or service asks about promises a rule
    nobody enforces: each is asked (``Action.X`` named) outside the policy module."""
    asked = set()
    for path in _product_sources():
        if path.relative_to(settings.BASE_DIR).as_posix() == "casefiles/access.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "Action":
                asked.add(node.attr)
    declared = {k for k in vars(Action) if k.isupper()}
    assert declared - asked == set(), "ask these where they apply, or remove them"


def test_anonymous_and_inactive_users_may_do_nothing(cast):
    from django.contrib.auth.models import AnonymousUser

    cast.lead.is_active = False
    cast.lead.save()
    for user in (AnonymousUser(), cast.lead, None):
        assert not any(can(user, a, cast.case) for a in ALL_ACTIONS)
        assert not Case.objects.visible_to(user).exists()


def test_members_see_exactly_their_cases(cast, other_case):
    MembershipFactory(user=cast.lawyer, case=other_case, role=Role.LAWYER)
    assert list(Case.objects.visible_to(cast.investigator)) == [cast.case]
    assert set(Case.objects.visible_to(cast.lawyer)) == {cast.case, other_case}
    assert not Case.objects.visible_to(cast.outsider).exists()
    assert not Case.objects.visible_to(cast.admin).exists()


def test_case_owned_rows_follow_the_case(cast, other_case):
    MembershipFactory(user=UserFactory(), case=other_case, role=Role.OBSERVER)
    visible = Membership.objects.visible_to(cast.observer)
    assert set(visible.values_list("case__reference", flat=True)) == {cast.case.reference}
    assert not Membership.objects.visible_to(cast.outsider).exists()


def test_an_expired_membership_gives_no_access(cast):
    m = Membership.objects.get(user=cast.investigator)
    Membership.objects.filter(pk=m.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert not Case.objects.visible_to(cast.investigator).exists()
    assert not can(cast.investigator, Action.VIEW_CASE, cast.case)
    with pytest.raises(Http404):
        get_case_for_user(cast.investigator, cast.case.reference)


def test_a_revoked_membership_gives_no_access(cast):
    m = Membership.objects.get(user=cast.lawyer)
    services.revoke_membership(actor=cast.admin, membership=m)
    assert not can(cast.lawyer, Action.VIEW_CASE, cast.case)
    with pytest.raises(Http404):
        get_case_for_user(cast.lawyer, cast.case.reference)


def test_get_case_for_user_hides_refusals_as_not_found(cast):
    assert get_case_for_user(cast.observer, cast.case.reference) == cast.case
    with pytest.raises(Http404):
        get_case_for_user(cast.observer, cast.case.reference, Action.MANAGE_MEMBERS)
    with pytest.raises(Http404):
        get_case_for_user(cast.outsider, cast.case.reference)
    with pytest.raises(Http404):
        get_case_for_user(cast.lead, "NO-SUCH-CASE")


# --- membership services --------------------------------------------------------


def test_granting_access_is_audited(cast, other_case):
    m = services.grant_membership(
        actor=cast.admin, case=other_case, user=cast.lawyer, role=Role.LAWYER
    )
    entry = AuditEntry.objects.get(action="membership.grant")
    assert (entry.actor, entry.case, entry.target_id) == (cast.admin, other_case, str(m.pk))
    assert entry.details["user"] == "lawyer"
    assert entry.details["role"] == "lawyer"
    assert "sole_admin" not in entry.details
    assert list(Case.objects.visible_to(cast.lawyer).order_by("pk")) == [cast.case, other_case]


def test_changing_and_revoking_access_are_audited(cast):
    m = Membership.objects.get(user=cast.observer)
    expiry = timezone.now() + timedelta(days=30)
    services.update_membership(
        actor=cast.admin, membership=m, role=Role.OBSERVER, expires_at=expiry
    )
    services.revoke_membership(actor=cast.admin, membership=m, reason="left the team")
    change, revoke = AuditEntry.objects.filter(action__startswith="membership.").order_by("seq")
    assert change.action == "membership.change"
    assert change.details["changes"]["expires_at"] == [None, expiry.isoformat()]
    assert revoke.action == "membership.revoke"
    assert revoke.details["reason"] == "left the team"
    m.refresh_from_db()
    assert m.revoked_at is not None and m.revoked_by == cast.admin


def test_granting_again_to_a_member_is_refused_and_leaves_their_access_as_it_was(cast):
    """A grant to someone who has access would revoke it and grant it anew, silently: it
    is refused, pointing to the change of their membership."""
    old = Membership.objects.get(user=cast.investigator)
    for role in (Role.INVESTIGATOR, Role.LEAD):
        with pytest.raises(ValidationError, match="already has access to this case as"):
            services.grant_membership(
                actor=cast.lead, case=cast.case, user=cast.investigator, role=role
            )
    old.refresh_from_db()
    assert old.revoked_at is None
    assert list(Membership.objects.active().filter(user=cast.investigator)) == [old]
    assert not AuditEntry.objects.filter(action__startswith="membership.").exists()


def test_a_role_changes_through_the_membership_and_keeps_the_history(cast):
    old = Membership.objects.get(user=cast.investigator)
    services.update_membership(
        actor=cast.lead, membership=old, role=Role.LEAD, expires_at=old.expires_at
    )
    assert can(cast.investigator, Action.MANAGE_MEMBERS, cast.case)
    entry = AuditEntry.objects.get(action="membership.change")
    assert entry.details["changes"]["role"] == [Role.INVESTIGATOR, Role.LEAD]


def test_a_role_needs_the_matching_system_group(cast, other_case):
    with pytest.raises(ValidationError, match="group"):
        services.grant_membership(
            actor=cast.admin, case=other_case, user=cast.lawyer, role=Role.INVESTIGATOR
        )
    assert not Membership.objects.filter(case=other_case).exists()
    assert not AuditEntry.objects.filter(action="membership.grant").exists()


def test_an_expiry_in_the_past_is_refused(cast, other_case):
    with pytest.raises(ValidationError):
        services.grant_membership(
            actor=cast.admin,
            case=other_case,
            user=cast.observer,
            role=Role.OBSERVER,
            expires_at=timezone.now() - timedelta(hours=1),
        )


def test_creating_a_case_is_audited(cast):
    case = services.create_case(actor=cast.admin, reference="SYR-2015-002", title="New")
    entry = AuditEntry.objects.get(action="case.create")
    assert entry.case == case and entry.actor_label == "admin"


def test_a_malformed_case_reference_is_refused(cast):
    with pytest.raises(ValidationError):
        services.create_case(actor=cast.admin, reference="syr 1", title="Bad")
    assert not CaseFactory._meta.model.objects.filter(title="Bad").exists()
