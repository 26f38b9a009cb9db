"""A package's four eyes are two people (decision 0022): the lawyer who asks and the lead
who approves may not be two accounts one admin alone created, enrolled or recovered.

The round's second sequence: the only admin made a lawyer and a lead account, put both
in the case (as a grant on one admin's word did before the rule: the memberships here
are written as such a grant left them), asked as the one, approved as the other and
built a package naming a witness.
"""

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from casefiles import audit
from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, LAWYER_GROUP, Role
from casefiles.models import Membership
from disclosure import services
from disclosure.models import Package
from legal.services import review
from tests.factories import UserFactory

from .conftest import BODY

pytestmark = pytest.mark.django_db


def _made_by(admin, username, group, role, case):
    """An account ``admin`` created (its ``user.create`` entry, as the Django admin
    writes it), with a membership as a lone admin's grant left it."""
    user = UserFactory(username=username, groups=[group])
    audit.record(admin, "user.create", target=user, change="added")
    Membership.objects.create(user=user, case=case, role=role, granted_by=admin)
    return user


@pytest.fixture
def puppets(world):
    cast = world.cast
    lawyer = _made_by(cast.admin, "puppet-lawyer", LAWYER_GROUP, Role.LAWYER, world.case)
    lead = _made_by(cast.admin, "puppet-lead", INVESTIGATOR_GROUP, Role.LEAD, world.case)
    return lawyer, lead


def _ask(world, lawyer):
    return services.request_package(
        actor=lawyer,
        case=world.case,
        recipient=BODY,
        purpose="prosecution",
        select="all",
        named_fields=["name_latin"],
    )


def test_with_one_admin_two_accounts_of_that_admin_cannot_approve_each_others_package(
    world, puppets
):
    lawyer, lead = puppets
    package = _ask(world, lawyer)
    with pytest.raises(ValidationError, match="same admin") as refused:
        services.approve_package(actor=lead, package=package, allowed_fields=["name_latin"])
    assert "second admin is added" in " ".join(refused.value.messages)
    package.refresh_from_db()
    assert package.status == Package.Status.REQUESTED
    # The case's own lead, whom that admin did not make, is a second person.
    services.approve_package(actor=world.cast.lead, package=package)
    package.refresh_from_db()
    assert package.status == Package.Status.APPROVED


def test_with_two_admins_the_same_two_accounts_may(world, puppets):
    """With a second admin, each of those accounts came into the case with a second
    person's approval (their grants waited for it): the rule no longer calls them one."""
    UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)
    lawyer, lead = puppets
    package = _ask(world, lawyer)
    services.approve_package(actor=lead, package=package)
    package.refresh_from_db()
    assert package.status == Package.Status.APPROVED


def test_a_package_approved_so_before_the_rule_is_not_built(world, puppets):
    lawyer, lead = puppets
    package = _ask(world, lawyer)
    Package.objects.filter(pk=package.pk).update(  # as an approval before the rule left it
        status=Package.Status.APPROVED, decided_by=lead, decided_at=timezone.now()
    )
    package.refresh_from_db()
    with pytest.raises(ValidationError, match="same admin"):
        services.start_build(actor=world.cast.lead, package=package)
    package.refresh_from_db()
    assert package.status == Package.Status.APPROVED


def test_an_account_that_created_the_other_is_the_same_person(world):
    """Not only admins: whoever created or enrolled an account may sign in as it."""
    cast = world.cast
    lawyer = UserFactory(username="second-lawyer", groups=[LAWYER_GROUP])
    Membership.objects.create(user=lawyer, case=world.case, role=Role.LAWYER)
    audit.record(cast.lead, "auth.enrolment_code_issue", target=lawyer)
    UserFactory(username="admin2", groups=[ADMIN_GROUP], is_staff=True)
    package = _ask(world, lawyer)
    with pytest.raises(ValidationError, match="one person"):
        services.approve_package(actor=cast.lead, package=package)


def test_a_review_approval_between_two_accounts_of_one_lone_admin_is_refused(world, puppets):
    """Submitter and approver of a review: the same rule."""
    lawyer, lead = puppets
    photo = world.photos[2]
    review.decide(actor=lawyer, record=photo, to_status="submitted")
    with pytest.raises(ValidationError, match="same admin"):
        review.decide(actor=lead, record=photo, to_status="approved")
    photo.refresh_from_db()
    assert photo.review_status == "submitted"
    review.decide(actor=world.cast.lead, record=photo, to_status="approved")
    photo.refresh_from_db()
    assert photo.review_status == "approved"


def test_a_link_confirmed_by_another_account_of_one_lone_admin_is_refused(world):
    """A legal link and its confirmation: the same rule."""
    from legal.models import LegalElement
    from legal.services import links

    cast = world.cast
    first = _made_by(cast.admin, "puppet-one", LAWYER_GROUP, Role.LAWYER, world.case)
    second = _made_by(cast.admin, "puppet-two", LAWYER_GROUP, Role.LAWYER, world.case)
    link = links.link_to_element(
        actor=first,
        case=world.case,
        record=world.photos[0],
        element=LegalElement.objects.get(code="RS-7-1-f.1"),
        stance="supports",
        proposition="Ligature marks on both wrists.",
    )
    with pytest.raises(ValidationError, match="same admin"):
        links.confirm_link(actor=second, link=link)
    links.confirm_link(actor=cast.lawyer, link=link)
