"""Reading a statement: every page that shows its text leaves a trace, and the statement
of a High or Critical protection witness is read only by who needs to."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from casefiles.access import INVESTIGATOR_GROUP, Role
from casefiles.models import AuditEntry
from legal.services import review
from people import services
from people.models import Identity, Person
from tests.casefiles.test_urls import _all_urls
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db

FIRST = "They took us to the branch at dawn.\nThe guard had a scar on his cheek."
SECOND = FIRST + "\nMy cousin Bassam was in the next cell."
REASON = "Witness remembered her cousin in the next cell"
COMMENT = "Ask again about the scar of the guard"
# What only a reader of the statement may see: its lines, why it changed, the review.
SECRETS = ["took us to the branch", "scar on his cheek", "cousin Bassam", REASON, COMMENT]


@pytest.fixture
def colleague(cast):
    """An investigator of the case who neither registered nor interviewed the witness."""
    user = UserFactory(username="colleague", groups=[INVESTIGATOR_GROUP])
    MembershipFactory(user=user, case=cast.case, role=Role.INVESTIGATOR)
    return user


def _testimony(cast, level, interviewers=()):
    witness = services.register_person(
        actor=cast.investigator,
        case=cast.case,
        role="witness",
        identity=Identity(name_ar="هالة"),
        protection_level=level,
    )
    testimony = services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text=FIRST,
        taken_at=timezone.now(),
        language="en",
        mode="in_person",
        interviewers=list(interviewers),
    )
    review.decide(actor=cast.investigator, record=testimony, to_status="submitted")
    review.decide(actor=cast.lawyer, record=testimony, to_status="returned", comment=COMMENT)
    services.revise_testimony(
        actor=cast.investigator, testimony=testimony, text=SECOND, reason=REASON
    )
    return testimony


def _urls(cast, testimony):
    values = {
        "ref": cast.case.reference,
        "code": testimony.witness.code,
        "testimony_id": str(testimony.pk),
    }
    urls = [url for url, _name, is_case in _all_urls(values) if is_case]
    # The page's other views of the statement: a given version, and the changes.
    page = testimony.get_absolute_url()
    return [*urls, f"{page}?b=1", f"{page}?a=1&b=2"]


def _body(response):
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return content.decode("utf-8", "replace")


@pytest.mark.parametrize("who", ["lead", "investigator", "lawyer"])
def test_every_page_that_shows_a_statement_records_who_read_it(client, cast, who):
    testimony = _testimony(cast, Person.Protection.STANDARD)
    client.force_login(getattr(cast, who))
    shown_on = []
    for url in _urls(cast, testimony):
        before = AuditEntry.objects.count()
        body = _body(client.get(url))
        if "scar on his cheek" not in body:
            continue
        shown_on.append(url)
        reads = AuditEntry.objects.filter(
            seq__gt=before,
            action="testimony.view",
            target_id=str(testimony.pk),
            actor=getattr(cast, who),
        )
        assert reads.exists(), url
    assert testimony.get_absolute_url() in shown_on
    if who != "lawyer":  # the form for a new version is for who may add testimony
        assert reverse("people:version_create", args=[cast.case.reference, testimony.pk]) in (
            shown_on
        )


def test_the_new_version_form_records_the_version_it_shows(client, cast):
    testimony = _testimony(cast, Person.Protection.STANDARD)
    client.force_login(cast.investigator)
    url = reverse("people:version_create", args=[cast.case.reference, testimony.pk])
    response = client.get(url)
    assert response.status_code == 200 and "cousin Bassam" in _body(response)
    entry = AuditEntry.objects.filter(action="testimony.view").latest("seq")
    assert (entry.actor, entry.target_id) == (cast.investigator, str(testimony.pk))
    assert entry.details["version"] == 2 and entry.details["for_revision"] is True


@pytest.mark.parametrize("level", [Person.Protection.HIGH, Person.Protection.CRITICAL])
@pytest.mark.parametrize("who", ["observer", "colleague"])
def test_a_protected_witness_statement_is_kept_from_members_without_need_to_know(
    client, cast, colleague, level, who
):
    testimony = _testimony(cast, level)
    user = colleague if who == "colleague" else cast.observer
    client.force_login(user)
    for url in _urls(cast, testimony):
        body = _body(client.get(url))
        assert not [s for s in SECRETS if s in body], url
    # What they do see: that the testimony exists, when it was taken, its status.
    page = client.get(testimony.get_absolute_url())
    assert page.status_code == 200
    html = _body(page)
    assert str(testimony) in html and "Returned" in html
    assert testimony.taken_at.strftime("%Y-%m-%d") in html
    assert "protection: only the members who may reveal this witness" in html
    assert "Write a new version" not in html
    entry = AuditEntry.objects.filter(action="testimony.view", actor=user).latest("seq")
    assert entry.details == {"withheld": True}
    # The form for a new version is refused outright, and so is the write behind it.
    form = reverse("people:version_create", args=[cast.case.reference, testimony.pk])
    if who == "colleague":
        assert client.get(form).status_code == 403
        response = client.post(form, {"text": "Overwritten.", "reason": "guessing"})
        assert response.status_code == 403
    with pytest.raises(PermissionDenied):
        services.revise_testimony(actor=user, testimony=testimony, text="x", reason="y")
    assert testimony.versions.count() == 2


@pytest.mark.parametrize("level", [Person.Protection.HIGH, Person.Protection.CRITICAL])
@pytest.mark.parametrize("who", ["lead", "investigator", "lawyer"])
def test_a_protected_witness_statement_is_read_by_who_may_reveal_and_the_lawyers(
    client, cast, level, who
):
    testimony = _testimony(cast, level)  # registered and logged by the investigator
    client.force_login(getattr(cast, who))
    html = _body(client.get(f"{testimony.get_absolute_url()}?a=1&b=2"))
    assert all(s in html for s in SECRETS)
    assert 'class="added"' in html


def test_a_high_witness_statement_is_read_by_its_interviewers(client, cast, colleague):
    testimony = _testimony(cast, Person.Protection.HIGH, interviewers=[colleague])
    client.force_login(colleague)
    assert "cousin Bassam" in _body(client.get(testimony.get_absolute_url()))
    testimony = _testimony(cast, Person.Protection.CRITICAL, interviewers=[colleague])
    assert "cousin Bassam" not in _body(client.get(testimony.get_absolute_url()))


# --- a testimony that can no longer be changed -------------------------------------


@pytest.fixture
def submitted(cast):
    testimony = _testimony(cast, Person.Protection.STANDARD)
    review.decide(actor=cast.investigator, record=testimony, to_status="submitted")
    return testimony


def test_an_old_link_to_a_new_version_of_a_submitted_testimony_says_why(client, cast, submitted):
    client.force_login(cast.investigator)
    url = reverse("people:version_create", args=[cast.case.reference, submitted.pk])
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == submitted.get_absolute_url()
    page = _body(client.get(response["Location"]))
    assert (
        "This testimony is submitted: only a new, returned or approved testimony takes a "
        "new version." in page
    )
    assert not AuditEntry.objects.filter(action="testimony.view", details__for_revision=True)


def test_a_version_sent_after_the_testimony_was_rejected_keeps_what_was_typed(
    client, cast, submitted
):
    review.decide(
        actor=cast.lead, record=submitted, to_status="rejected", comment="Not the witness."
    )
    client.force_login(cast.investigator)
    url = reverse("people:version_create", args=[cast.case.reference, submitted.pk])
    assert client.get(url).status_code == 302
    typed = "A late correction the interviewer typed."
    response = client.post(url, {"text": typed, "reason": "late"})
    assert response.status_code == 409
    html = _body(response)
    assert typed in html and "This testimony is rejected" in html
    assert submitted.versions.count() == 2
