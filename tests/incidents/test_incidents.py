"""Incidents: who did what to whom, where and when. Every change is a service that keeps
the whole incident as a new version (append-only, bound into the audit chain); pages
keep what was typed on an error; outsiders get 404."""

from datetime import date
from io import StringIO

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from casefiles.models import AuditEntry
from incidents.models import Incident, IncidentVersion, Precision
from incidents.services import incidents as services
from legal.models import LegalElement
from places.models import Place
from tests.factories import register_person
from vocabularies.models import Term
from vocabularies.services import terms

pytestmark = pytest.mark.django_db


def _incident(cast, **fields):
    fields.setdefault("title_en", "Arrest at the Qaboun checkpoint")
    return services.create_incident(actor=cast.investigator, case=cast.case, **fields)


def test_an_incident_is_recorded_with_acts_perpetrators_and_links(cast, story):
    incident = _incident(
        cast,
        title_ar="اعتقال على حاجز القابون",
        precision=Precision.MONTH,
        starts_on=date(2012, 12, 17),
        place=Place.objects.get(code="SY-FAC-MP-QABOUN"),
    )
    assert (incident.reference, incident.starts_on, incident.ends_on) == (
        "IN-0001",
        date(2012, 12, 1),
        date(2012, 12, 31),
    )
    assert incident.when == "2012-12"
    act = services.add_act(
        actor=cast.investigator,
        incident=incident,
        victim=story.victim,
        act_type=story.arrest,
        method=story.beating,
        unit=story.intelligence,
        involvement=story.carried_out,
    )
    services.add_perpetrator(
        actor=cast.lead, act=act, person=story.suspect, involvement=story.gave_orders
    )
    element = LegalElement.objects.get(code="RS-7-1-e.1")
    for record in (story.item, story.testimony, element):
        services.link_record(actor=cast.investigator, incident=incident, record=record)

    incident.refresh_from_db()
    assert incident.version == 6
    versions = list(incident.versions.order_by("number"))
    assert [v.change for v in versions] == [
        "incident.create",
        "incident.act_add",
        "incident.perpetrator_add",
        "incident.link",
        "incident.link",
        "incident.link",
    ]
    state = versions[-1].state
    assert state["place"] == "SY-FAC-MP-QABOUN"
    assert state["acts"] == [
        {
            "act": act.pk,
            "victim": story.victim.code,
            "act_type": "030101000000",
            "method": "030100000000",
            "perpetrators": [
                {"unit": "010106000000", "person": None, "involvement": "010100000000"},
                {"unit": None, "person": story.suspect.code, "involvement": "010200000000"},
            ],
        }
    ]
    assert state["links"] == [
        {"item": story.item.reference},
        {"testimony": story.testimony.pk},
        {"element": "RS-7-1-e.1"},
    ]
    assert versions[0].state["acts"] == []  # the first version is as it was
    entries = AuditEntry.objects.filter(action__startswith="incident.").order_by("seq")
    assert [e.details["version"] for e in entries] == [1, 2, 3, 4, 5, 6]
    out = StringIO()
    call_command("verify_audit", stdout=out)
    assert "incidents_incidentversion 6" in out.getvalue(), out.getvalue()


def test_the_services_refuse_what_is_not_of_the_case(cast, story, other_case):
    incident = _incident(cast)
    stranger = register_person(other_case, story_owner(other_case))
    with pytest.raises(ValidationError):
        services.add_act(
            actor=cast.investigator, incident=incident, victim=stranger, act_type=story.arrest
        )
    with pytest.raises(ValidationError):  # a method is not an act type
        services.add_act(
            actor=cast.investigator, incident=incident, victim=story.victim, act_type=story.beating
        )
    with pytest.raises(ValidationError):  # a unit and a person at once
        services.add_act(
            actor=cast.investigator,
            incident=incident,
            victim=story.victim,
            act_type=story.arrest,
            unit=story.intelligence,
            perpetrator=story.suspect,
            involvement=story.carried_out,
        )
    with pytest.raises(ValidationError):  # a range that ends before it starts
        _incident(
            cast, precision=Precision.RANGE, starts_on=date(2013, 1, 2), ends_on=date(2012, 1, 1)
        )
    with pytest.raises(ValidationError):
        _incident(cast, title_en=" ", title_ar="")
    for writer in (cast.lawyer, cast.observer, cast.outsider, cast.admin):
        with pytest.raises(PermissionDenied):
            services.create_incident(actor=writer, case=cast.case, title_en="x")
    assert Incident.objects.count() == 1
    assert incident.versions.count() == 1


def story_owner(case):
    from tests.factories import MembershipFactory, UserFactory

    owner = UserFactory(username=f"owner-{case.reference}", groups=["Investigator"])
    MembershipFactory(user=owner, case=case, role="lead")
    return owner


def test_a_retired_term_stays_on_the_acts_that_hold_it(client, cast, story):
    incident = _incident(cast)
    services.add_act(
        actor=cast.investigator,
        incident=incident,
        victim=story.victim,
        act_type=story.torture,
        method=story.falanga,
    )
    terms.retire_terms(actor=cast.admin, terms=Term.objects.filter(pk=story.falanga.pk))
    with pytest.raises(ValidationError):
        services.add_act(
            actor=cast.investigator,
            incident=incident,
            victim=story.victim,
            act_type=story.torture,
            method=story.falanga,
        )
    services.update_incident(actor=cast.investigator, incident=incident, title_en="Renamed")
    client.force_login(cast.investigator)
    page = client.get(incident.get_absolute_url()).content.decode()
    assert "Falanga - beating of soles of the feet" in page and "retired term" in page
    form = client.get(reverse("incidents:act_add", args=[cast.case.reference, "IN-0001"]))
    assert story.falanga.label_en not in form.content.decode()


def test_versions_cannot_be_changed_or_deleted(cast, story):
    incident = _incident(cast)
    version = incident.versions.get()
    with pytest.raises(TypeError):
        version.save()
    with pytest.raises(TypeError):
        version.delete()
    with pytest.raises(TypeError):
        IncidentVersion.objects.filter(pk=version.pk).update(change="x")
    with pytest.raises(TypeError):
        IncidentVersion.objects.filter(pk=version.pk).delete()
    table = IncidentVersion._meta.db_table
    for sql in (f"UPDATE {table} SET change = 'x'", f"DELETE FROM {table}"):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    assert IncidentVersion.objects.get(pk=version.pk).change == "incident.create"


def test_the_pages_record_and_change_an_incident(client, cast, story):
    client.force_login(cast.investigator)
    ref = cast.case.reference
    response = client.post(
        reverse("incidents:incident_create", args=[ref]),
        {
            "title_ar": "اعتقال على حاجز القابون",
            "description_en": "Taken at the checkpoint at dawn.",
            "precision": "approximate",
            "starts_on": "2012-12-17",
            "place": Place.objects.get(code="SY-FAC-MP-QABOUN").pk,
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    incident = Incident.objects.get(case=cast.case)
    assert incident.when == "~2012-12-17"
    url = incident.get_absolute_url()
    response = client.post(
        reverse("incidents:act_add", args=[ref, incident.reference]),
        {
            "victim": story.victim.pk,
            "act_type": story.arrest.pk,
            "unit": story.intelligence.pk,
            "involvement": story.carried_out.pk,
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    response = client.post(
        reverse("incidents:link_add", args=[ref, incident.reference]),
        {"record": story.item.reference},
    )
    assert response.status_code == 302
    page = client.get(url).content.decode()
    assert "اعتقال على حاجز القابون" in page and story.victim.code in page
    assert "Intelligence agency; secret service" in page and story.item.reference in page
    assert "ليلى" not in page and "سامر" not in page  # victims by pseudonym only
    old = client.get(url, {"version": 1}).content.decode()
    assert "Version 1 as it was recorded" in old
    assert client.get(url, {"version": 99}).status_code == 404

    act = incident.acts.get()
    remove = reverse("incidents:act_remove", args=[ref, incident.reference, act.pk])
    assert client.get(remove).status_code == 405
    assert client.post(remove).status_code == 302
    assert not act.perpetrators.exists()  # (the deletion went back with the refused write)
    assert incident.versions.count() == 4


def test_a_form_with_an_error_keeps_what_was_typed(client, cast, story):
    client.force_login(cast.investigator)
    ref = cast.case.reference
    typed = {
        "description_ar": "وصف طويل كُتب بعناية",
        "precision": "range",
        "starts_on": "2012-12-17",
    }
    response = client.post(reverse("incidents:incident_create", args=[ref]), typed)
    assert response.status_code == 400
    page = response.content.decode()
    assert "Give the incident a title in Arabic or in English." in page
    assert "وصف طويل كُتب بعناية" in page and "2012-12-17" in page
    response = client.post(
        reverse("incidents:incident_create", args=[ref]), {**typed, "title_en": "Arrest"}
    )
    assert response.status_code == 400
    assert "A range needs its last day." in response.content.decode()
    assert not Incident.objects.exists()

    incident = _incident(cast)
    edit = reverse("incidents:incident_edit", args=[ref, incident.reference])
    seen = client.get(edit).context["form"].initial["expected_version"]
    services.update_incident(actor=cast.lead, incident=incident, title_en="Changed meanwhile")
    response = client.post(
        edit, {"title_en": "My own title", "description_en": "Mine", "expected_version": seen}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "Someone changed this incident while you were editing it" in page
    assert "My own title" in page
    incident.refresh_from_db()
    assert incident.title_en == "Changed meanwhile"
    response = client.post(
        reverse("incidents:link_add", args=[ref, incident.reference]), {"record": "EV-999999"}
    )
    assert response.status_code == 400 and "EV-999999" in response.content.decode()


def test_outsiders_get_404_and_observers_only_read(client, cast, story):
    incident = _incident(cast)
    ref = cast.case.reference
    urls = [
        reverse("incidents:incident_list", args=[ref]),
        incident.get_absolute_url(),
        reverse("incidents:incident_edit", args=[ref, incident.reference]),
    ]
    for user in (cast.outsider, cast.admin):
        client.force_login(user)
        assert [client.get(u).status_code for u in urls] == [404, 404, 404]
    client.force_login(cast.observer)
    assert [client.get(u).status_code for u in urls] == [200, 200, 404]
    assert "Add an act" not in client.get(urls[1]).content.decode()


def test_the_list_filters_by_date_place_act_and_victim(client, cast, story):
    december = _incident(
        cast,
        precision=Precision.MONTH,
        starts_on=date(2012, 12, 1),
        place=Place.objects.get(code="SY-FAC-SAYDNAYA"),
    )
    services.add_act(
        actor=cast.investigator, incident=december, victim=story.victim, act_type=story.torture
    )
    _incident(cast, title_en="Later", precision=Precision.DAY, starts_on=date(2013, 6, 1))
    client.force_login(cast.lawyer)
    url = reverse("incidents:incident_list", args=[cast.case.reference])

    def found(**query):
        response = client.get(url, query)
        assert response.status_code == 200, response.content.decode()[:2000]
        return [i.reference for i in response.context["page"]]

    assert found() == ["IN-0001", "IN-0002"]
    assert found(when_after="2012-12-20", when_before="2012-12-24") == ["IN-0001"]
    assert found(when_after="2013-01-01") == ["IN-0002"]
    assert found(place=Place.objects.get(code="SY-RD").pk) == ["IN-0001"]  # within
    assert found(place=Place.objects.get(code="SY-HL").pk) == []
    assert found(act_type=story.torture.pk) == ["IN-0001"]
    assert found(victim=story.victim.code.lower()) == ["IN-0001"]
    assert client.get(url, {"place": "nowhere"}).status_code == 400
    entry = AuditEntry.objects.filter(action="incident.list").latest("seq")
    assert entry.details["filters"] == {"place": "nowhere"}


# Each page is audited (the chain's advisory lock on PostgreSQL). The list: the session,
# the user and their second factor, the case with the viewer's role, the page, its
# count, the audit entry (savepoint, head, row, release), whether the viewer may add
# (two), and the place and act-type choices of its filters. An incident, whatever its
# acts: the incident, its acts, their perpetrators, its links and its versions in place
# of the page, its count and the choices.
CHAIN_LOCK = 1 if connection.vendor == "postgresql" else 0
LIST_QUERIES = 14 + CHAIN_LOCK
DETAIL_QUERIES = 16 + CHAIN_LOCK


@pytest.mark.parametrize("acts", [1, 4])
def test_the_pages_cost_an_exact_number_of_queries(client, cast, story, acts):
    incident = _incident(cast)
    for _ in range(acts):
        act = services.add_act(
            actor=cast.investigator,
            incident=incident,
            victim=story.victim,
            act_type=story.arrest,
            unit=story.intelligence,
            involvement=story.carried_out,
        )
        services.add_perpetrator(
            actor=cast.lead, act=act, person=story.suspect, involvement=story.gave_orders
        )
    services.link_record(actor=cast.lead, incident=incident, record=story.item)
    services.link_record(actor=cast.lead, incident=incident, record=story.testimony)
    client.force_login(cast.investigator)
    url = reverse("incidents:incident_list", args=[cast.case.reference])
    client.get(url)
    with CaptureQueriesContext(connection) as page:
        assert client.get(url).status_code == 200
    assert len(page.captured_queries) == LIST_QUERIES, [q["sql"] for q in page]
    with CaptureQueriesContext(connection) as page:
        assert client.get(incident.get_absolute_url()).status_code == 200
    assert len(page.captured_queries) == DETAIL_QUERIES, [q["sql"] for q in page]


def test_a_perpetrator_for_an_act_removed_meanwhile_gets_a_clear_error(
    client, cast, story, monkeypatch
):
    """The form is loaded, someone removes the act, then the form is sent: the act the view
    read is gone by the time the incident is locked. A message and 400, not a 500."""
    incident = _incident(cast)
    act = services.add_act(
        actor=cast.investigator, incident=incident, victim=story.victim, act_type=story.arrest
    )
    client.force_login(cast.lead)
    url = reverse(
        "incidents:perpetrator_add", args=[cast.case.reference, incident.reference, act.pk]
    )
    assert client.get(url).status_code == 200
    real_locked = services._locked

    def removed_meanwhile(incident, *args, **kwargs):
        # what a concurrent remove_act leaves once it has committed and let the lock go
        incident.acts.filter(pk=act.pk).delete()
        return real_locked(incident, *args, **kwargs)

    monkeypatch.setattr(services, "_locked", removed_meanwhile)
    sent = {"person": story.suspect.pk, "involvement": story.gave_orders.pk}
    response = client.post(url, sent)
    assert response.status_code == 400
    assert "removed from the incident meanwhile" in response.content.decode()
    assert not act.perpetrators.exists()  # (the deletion went back with the refused write)
    assert not AuditEntry.objects.filter(action="incident.perpetrator_add").exists()
