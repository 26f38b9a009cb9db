"""A package request, what its preview says goes in, is left out and why, and its
four-eyes decision (approve, refuse, withdraw), every step audited."""

import io

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from casefiles.models import AuditEntry
from disclosure import contents, services
from disclosure.contents import review
from disclosure.models import Package
from tests.html import shows

from .conftest import BODY

pytestmark = pytest.mark.django_db


def _request(world, **kwargs):
    values = {"recipient": BODY, "purpose": "prosecution", "select": "all"}
    values.update(kwargs)
    return services.request_package(actor=world.cast.lawyer, case=world.case, **values)


def test_the_preview_lists_what_goes_in_what_is_not_approved_and_what_is_refused(world):
    package = _request(world)
    found = review(world.cast.lawyer, package)
    photos, t = world.photos, world.testimonies
    assert [line.ref for line in found.items] == [photos[0].reference, photos[1].reference]
    assert [line.ref for line in found.testimonies] == [contents.testimony_ref(t["standard"])]
    assert [line.ref for line in found.not_approved] == [photos[2].reference]
    refused = {line.ref: (line.reason, line.codes) for line in found.refused}
    # The reason goes into the package: it names no one; the preview shows whose beside.
    assert refused == {
        contents.testimony_ref(t["critical"]): (
            "The witness gave no consent for this purpose.",
            [world.critical.code],
        )
    }
    source = found.items[0].redactions
    assert source == [f"Source shown as {world.critical.code}: Critical protection"]


def test_sharing_needs_the_recipient_among_the_bodies_named(world):
    other = _request(world, purpose="sharing", recipient="Someone else")
    refused = {line.ref for line in review(world.cast.lawyer, other).refused}
    assert contents.testimony_ref(world.testimonies["standard"]) in refused
    named = _request(world, purpose="sharing", recipient=BODY.upper())
    assert contents.testimony_ref(world.testimonies["standard"]) in {
        line.ref for line in review(world.cast.lawyer, named).testimonies
    }


def test_a_chosen_selection_takes_references_and_refuses_bad_ones(world):
    ref = world.photos[1].reference
    package = _request(world, select=f"{ref}, T-{world.testimonies['standard'].pk}")
    found = review(world.cast.lawyer, package)
    assert [line.ref for line in found.included] == [
        ref,
        contents.testimony_ref(world.testimonies["standard"]),
    ]
    with pytest.raises(ValidationError, match="EV-000123"):
        _request(world, select="EV-1; DROP")
    with pytest.raises(ValidationError, match="names nothing"):
        _request(world, select="EV-999999")


def test_a_legal_elements_supporting_evidence_is_a_selection(world):
    from legal.models import LegalElement
    from legal.services import links

    element = LegalElement.objects.get(code="RS-7-1-f.1")
    links.link_to_element(
        actor=world.cast.lawyer,
        case=world.case,
        record=world.photos[1],
        element=element,
        stance="supports",
        proposition="Marks of beating.",
    )
    package = _request(world, select="element", element=element)
    assert [line.ref for line in review(world.cast.lawyer, package).included] == [
        world.photos[1].reference
    ]


def test_only_who_may_disclose_requests(world):
    for user in (world.cast.investigator, world.cast.observer, world.cast.outsider):
        with pytest.raises(PermissionDenied):
            services.request_package(
                actor=user, case=world.case, recipient=BODY, purpose="prosecution"
            )
    with pytest.raises(ValidationError):
        _request(world, purpose="gossip")
    with pytest.raises(ValidationError):
        _request(world, recipient="  ")


def test_four_eyes_a_lead_who_did_not_request_approves(world):
    cast = world.cast
    package = services.request_package(
        actor=cast.lead, case=world.case, recipient=BODY, purpose="prosecution"
    )
    with pytest.raises(PermissionDenied, match="did not request"):
        services.approve_package(actor=cast.lead, package=package)
    mine = _request(world)
    with pytest.raises(PermissionDenied, match="Only a lead"):
        services.approve_package(actor=cast.lawyer, package=mine)
    approved = services.approve_package(actor=cast.lead, package=mine)
    assert approved.status == Package.Status.APPROVED
    assert approved.contents == {
        "items": [world.photos[0].pk, world.photos[1].pk],
        "testimonies": [world.testimonies["standard"].pk],
        "redacted": {},
        "withheld_fields": {},  # no whole item's field names a protected person
        "kept_fields": {},
    }
    with pytest.raises(ValidationError, match="not open"):
        services.refuse_package(actor=cast.lead, package=mine, reason="Too late.")
    entry = AuditEntry.objects.filter(action="disclosure.approve").get()
    assert entry.details["not_approved"] == [world.photos[2].reference]


def test_a_refusal_takes_a_reason_and_a_withdrawal_ends_a_package(world):
    cast = world.cast
    package = _request(world)
    with pytest.raises(ValidationError):
        services.refuse_package(actor=cast.lead, package=package, reason=" ")
    refused = services.refuse_package(actor=cast.lead, package=package, reason="Not yet.")
    assert (refused.status, refused.reason) == (Package.Status.REFUSED, "Not yet.")
    other = _request(world)
    with pytest.raises(PermissionDenied):
        services.withdraw_package(actor=cast.investigator, package=other)
    gone = services.withdraw_package(actor=cast.lawyer, package=other, reason="Sent otherwise.")
    assert gone.status == Package.Status.WITHDRAWN
    actions = list(
        AuditEntry.objects.filter(action__startswith="disclosure.").values_list("action", flat=True)
    )
    assert actions == [
        "disclosure.request",
        "disclosure.refuse",
        "disclosure.request",
        "disclosure.withdraw",
    ]


def test_the_commands_request_and_approve(world):
    out = io.StringIO()
    call_command(
        "disclosure",
        "request",
        "--case",
        world.case.reference,
        "--select",
        "all",
        "--recipient",
        BODY,
        "--purpose",
        "prosecution",
        "--as",
        "lawyer",
        stdout=out,
    )
    pk = int(out.getvalue())
    with pytest.raises(CommandError, match="Only a lead"):
        call_command("disclosure", "approve", str(pk), "--as", "lawyer")
    with pytest.raises(CommandError, match="Only a lead"):
        call_command("disclosure", "approve", str(pk), "--as", "investigator")
    out = io.StringIO()
    call_command("disclosure", "approve", str(pk), "--as", "lead", stdout=out)
    assert "approved: 3 records" in out.getvalue()
    with pytest.raises(CommandError, match="No package"):
        call_command("disclosure", "approve", "999999", "--as", "lead")


def test_the_pages_request_preview_and_decide(client, world):
    cast = world.cast
    client.force_login(cast.lawyer)
    url = reverse("disclosure:packages", args=[world.case.reference])
    page = client.get(url)
    assert page.status_code == 200 and "Request a package" in page.content.decode()
    bad = client.post(url, {"recipient": BODY, "purpose": "prosecution", "select": "chosen"})
    assert bad.status_code == 400
    response = client.post(url, {"recipient": BODY, "purpose": "prosecution", "select": "all"})
    package = Package.objects.get()
    assert response["Location"] == package.get_absolute_url()
    preview = client.get(package.get_absolute_url()).content.decode()
    assert world.photos[2].reference in preview and "Not approved in review" in preview
    assert "gave no consent for this purpose" in preview
    assert "Approve" not in preview  # the requester does not decide
    client.force_login(cast.lead)
    decide = client.get(package.get_absolute_url()).content.decode()
    assert "Approve" in decide
    refused = client.post(reverse("disclosure:refuse", args=[world.case.reference, package.pk]))
    assert refused.status_code == 400
    client.post(reverse("disclosure:approve", args=[world.case.reference, package.pk]))
    package.refresh_from_db()
    assert package.status == Package.Status.APPROVED and package.decided_by == cast.lead
    client.force_login(cast.observer)
    assert "Request a package" not in client.get(url).content.decode()
    assert client.post(url, {"recipient": "x", "purpose": "prosecution"}).status_code == 403


def test_approving_a_selection_where_nothing_may_go_in_says_why(client, world):
    """Nothing approved in review among the chosen: the approval is refused with the reason
    on the package's page, not a server error, and the package waits as it was."""
    package = _request(world, select=world.photos[2].reference)  # not approved in review
    client.force_login(world.cast.lead)
    url = reverse("disclosure:approve", args=[world.case.reference, package.pk])
    response = client.post(url)
    assert response.status_code == 400
    assert "Nothing in this selection may go in" in response.content.decode()
    package.refresh_from_db()
    assert package.status == Package.Status.REQUESTED


def test_a_member_who_may_not_export_sees_no_preview(client, world):
    """The preview lists the case's records as the requester reads them (testimonies, their
    witnesses' protection): an observer sees the package's status, not its contents."""
    package = _request(world)
    ref = contents.testimony_ref(world.testimonies["standard"])
    client.force_login(world.cast.lead)
    assert ref in client.get(package.get_absolute_url()).content.decode()
    client.force_login(world.cast.observer)
    page = client.get(package.get_absolute_url())
    assert page.status_code == 200
    assert not shows(page, ref) and not shows(page, "Goes in")


def test_a_request_from_the_command_line_says_what_is_left_out_and_why_as_the_page_does(
    client, world
):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "disclosure",
        "request",
        "--case",
        world.case.reference,
        "--select",
        "all",
        "--recipient",
        BODY,
        "--purpose",
        "prosecution",
        "--as",
        "lawyer",
        stdout=out,
        stderr=err,
    )
    package = Package.objects.get(pk=int(out.getvalue()))  # stdout: the id alone, for scripts
    said = err.getvalue()
    photos, critical = world.photos, world.testimonies["critical"]
    assert "3 records go in" in said
    assert "Not approved in review: left out (1)" in said
    assert f"  {photos[2].reference}: Not approved in review (New)." in said
    assert "Refused: left out (1)" in said
    refused = f"{contents.testimony_ref(critical)}: The witness gave no consent"
    assert f"  {refused} for this purpose. ({world.critical.code})" in said
    # The package's page lists the same records under the same headings.
    client.force_login(world.cast.lawyer)
    page = client.get(package.get_absolute_url()).content.decode()
    for line in said.splitlines()[1:]:
        assert line.strip() in page, line
