"""Back and send again: a create form posted twice with its token makes one record, and
the second POST goes back to the first one's result (casefiles/once.py)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from casefiles import once
from casefiles.models import AuditEntry, Submission
from legal.models import Comment
from legal.services import comments
from tests.evidence.factories import EvidenceItemFactory
from tests.html import has_text

pytestmark = pytest.mark.django_db


class _Forms(HTMLParser):
    """Each form of a page: its action and the values of its inputs, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "form":
            self.forms.append({"action": values.get("action") or "", "fields": {}})
        elif tag == "input" and self.forms and values.get("name"):
            self.forms[-1]["fields"].setdefault(values["name"], values.get("value") or "")


def forms_of(response) -> list[dict]:
    parser = _Forms()
    parser.feed(response.content.decode())
    return parser.forms


def comment_token(client, item) -> str:
    """The token of the comment form on the item's page, as the browser was given it."""
    url = reverse("legal:item_comment", args=[item.case.reference, item.reference])
    (form,) = [f for f in forms_of(client.get(item.get_absolute_url())) if f["action"] == url]
    return form["fields"][once.FIELD]


@pytest.fixture
def item(cast):
    return EvidenceItemFactory(case=cast.case)


@pytest.fixture
def comment_url(item):
    return reverse("legal:item_comment", args=[item.case.reference, item.reference])


def test_the_same_comment_form_sent_twice_makes_one_comment(client, cast, item, comment_url):
    client.force_login(cast.lawyer)
    token = comment_token(client, item)
    first = client.post(comment_url, {"text": "The date differs.", once.FIELD: token})
    assert first.status_code == 302
    again = client.post(comment_url, {"text": "The date differs.", once.FIELD: token})
    assert again.status_code == 302
    assert again["Location"] == first["Location"]
    assert Comment.objects.count() == 1
    assert AuditEntry.objects.filter(action="legal.comment").count() == 1
    assert has_text(client.get(again["Location"]), "This was already saved.")


def test_a_refused_form_comes_back_with_its_token_which_then_saves(client, cast, item, comment_url):
    client.force_login(cast.lawyer)
    token = comment_token(client, item)
    refused = client.post(comment_url, {"text": "  ", once.FIELD: token})
    assert refused.status_code == 400
    (form,) = [f for f in forms_of(refused) if once.FIELD in f["fields"]]
    assert form["fields"][once.FIELD] == token  # nothing saved, so the token is not spent
    assert not Submission.objects.exists()
    fixed = client.post(comment_url, {"text": "Seen.", once.FIELD: token})
    assert fixed.status_code == 302
    assert Comment.objects.get().text == "Seen."
    assert Submission.objects.get().token == token


def test_another_form_with_another_token_makes_another_record(client, cast, item, comment_url):
    client.force_login(cast.lawyer)
    for text in ("First.", "Second."):
        token = comment_token(client, item)
        assert client.post(comment_url, {"text": text, once.FIELD: token}).status_code == 302
    assert sorted(Comment.objects.values_list("text", flat=True)) == ["First.", "Second."]


@pytest.mark.parametrize("token", ["", "not-a-token", "x" * 33])
def test_a_form_without_a_token_is_refused_keeping_what_was_typed(
    client, cast, item, comment_url, token
):
    client.force_login(cast.lawyer)
    response = client.post(comment_url, {"text": "Typed on an old page.", once.FIELD: token})
    assert response.status_code == 400
    assert has_text(response, "This form came from an old page and was not saved.")
    assert "Typed on an old page." in response.content.decode()
    (form,) = [f for f in forms_of(response) if once.FIELD in f["fields"]]
    fresh = form["fields"][once.FIELD]
    assert fresh != token and len(fresh) == 32  # sent again, it saves
    assert not Comment.objects.exists()
    assert not AuditEntry.objects.filter(action="legal.comment").exists()
    assert client.post(comment_url, {"text": "Again.", once.FIELD: fresh}).status_code == 302
    assert Comment.objects.get().text == "Again."


def test_a_token_another_account_spent_is_refused(client, cast, item, comment_url):
    client.force_login(cast.lawyer)
    token = comment_token(client, item)
    client.post(comment_url, {"text": "Mine.", once.FIELD: token})
    client.force_login(cast.lead)
    response = client.post(comment_url, {"text": "Theirs.", once.FIELD: token})
    assert response.status_code == 400
    assert [c.text for c in Comment.objects.all()] == ["Mine."]


def test_a_repeat_whose_page_was_not_noted_goes_to_the_case(client, cast, item, comment_url):
    """The write committed, then the process stopped before noting where it went."""
    client.force_login(cast.lawyer)
    token = comment_token(client, item)
    client.post(comment_url, {"text": "Once.", once.FIELD: token})
    Submission.objects.update(result_url="")
    again = client.post(comment_url, {"text": "Once.", once.FIELD: token})
    assert again["Location"] == cast.case.get_absolute_url()
    assert Comment.objects.count() == 1


def test_a_token_spent_meanwhile_rolls_the_second_write_back(cast, item):
    """The race the pre-check cannot see: another request spent the token after this
    one looked. Its write fails on the token's uniqueness and is undone."""
    token = once.new_token()
    with once.claimed(cast.lawyer.pk, token):
        comments.add_comment(actor=cast.lawyer, case=cast.case, record=item, text="First.")
    entries = AuditEntry.objects.count()
    with pytest.raises(once.AlreadySaved), once.claimed(cast.lawyer.pk, token):
        comments.add_comment(actor=cast.lawyer, case=cast.case, record=item, text="Twice.")
    assert [c.text for c in Comment.objects.all()] == ["First."]
    assert AuditEntry.objects.count() == entries


# --- Every create form carries the token -------------------------------------------


def create_views(patterns=None, namespace=""):
    """The URL names of every view marked ``@once.creates``."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            inner = ":".join(filter(None, [namespace, p.namespace]))
            yield from create_views(p.url_patterns, inner)
        elif isinstance(p, URLPattern) and once.is_create_view(p.callback):
            yield ":".join(filter(None, [namespace, p.name]))


@pytest.fixture
def world(cast, tmp_path):
    """One of each record a create form hangs from."""
    from incidents.services import incidents as incident_services
    from missing.models import Antemortem
    from missing.services import missing as missing_services
    from people import services as people_services
    from tests.evidence.helpers import take_in
    from tests.evidence.images import jpeg_bytes
    from tests.factories import register_person
    from vocabularies.models import Scheme, Term

    victim = register_person(cast.case, cast.investigator, role="victim")
    witness = register_person(cast.case, cast.investigator, role="witness")
    batch = take_in(cast.case, cast.investigator, {"a.jpg": jpeg_bytes(1)}, tmp_path / "m")
    testimony = people_services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text="He was taken at the checkpoint.",
        taken_at="2014-03-01T10:00:00Z",
        language="en",
        mode="in_person",
    )
    incident = incident_services.create_incident(
        actor=cast.investigator, case=cast.case, title_en="Arrest at the checkpoint"
    )
    act = incident_services.add_act(
        actor=cast.investigator,
        incident=incident,
        victim=victim,
        act_type=Term.objects.get(scheme=Scheme.ACT_TYPE, code="030101000000"),
    )
    missing_services.save_profile(
        actor=cast.investigator,
        case=cast.case,
        person=victim,
        values=Antemortem(physical="Tall"),
    )
    return {
        "ref": cast.case.reference,
        "item": batch.items.get(),
        "testimony": testimony,
        "victim": victim,
        "incident": incident,
        "act": act,
    }


def pages(cast, w):
    """For each create view: who opens its form, the page the form is on, and the form's
    own URL (its action)."""
    ref, item, testimony = w["ref"], w["item"], w["testimony"]
    on_item, on_testimony = [ref, item.reference], [ref, testimony.pk]
    incident = [ref, w["incident"].reference]
    workspace = reverse("legal:workspace", args=[ref])

    def own(name, args, who="lead"):
        url = reverse(name, args=args)
        return who, url, url

    def hosted(name, args, page, who="lawyer"):
        return who, page, reverse(name, args=args)

    return {
        "case_create": ("admin", reverse("case_create"), reverse("case_create")),
        "case_members": own("case_members", [ref]),
        "evidence:upload": own("evidence:upload", [ref]),
        "evidence:identification_create": own("evidence:identification_create", on_item),
        "evidence:custody_create": own("evidence:custody_create", on_item),
        "people:person_create": own("people:person_create", [ref]),
        "people:relation_create": own("people:relation_create", [ref, w["victim"].code]),
        "people:consent_create": own("people:consent_create", [ref, w["victim"].code]),
        "people:testimony_create": own("people:testimony_create", [ref]),
        "people:version_create": own("people:version_create", on_testimony),
        "legal:item_link": hosted("legal:item_link", on_item, item.get_absolute_url()),
        "legal:item_assess": hosted("legal:item_assess", on_item, item.get_absolute_url()),
        "legal:item_comment": hosted("legal:item_comment", on_item, item.get_absolute_url()),
        "legal:testimony_link": hosted(
            "legal:testimony_link", on_testimony, testimony.get_absolute_url()
        ),
        "legal:testimony_assess": hosted(
            "legal:testimony_assess", on_testimony, testimony.get_absolute_url()
        ),
        "legal:testimony_comment": hosted(
            "legal:testimony_comment", on_testimony, testimony.get_absolute_url()
        ),
        "legal:search_save": hosted("legal:search_save", [ref], f"{workspace}?status=draft"),
        "legal:bulk": hosted("legal:bulk", [ref], workspace),
        "disclosure:packages": own("disclosure:packages", [ref], who="lawyer"),
        "disclosure:item_redact": own("disclosure:item_redact", on_item),
        "incidents:incident_create": own("incidents:incident_create", [ref]),
        "incidents:act_add": own("incidents:act_add", incident),
        "incidents:perpetrator_add": own("incidents:perpetrator_add", [*incident, w["act"].pk]),
        "incidents:link_add": own("incidents:link_add", incident),
        "missing:session_create": own("missing:session_create", [ref, w["victim"].code]),
    }


def test_every_create_form_carries_a_token(client, cast, world):
    table = pages(cast, world)
    assert set(create_views()) == set(table), "a create view without its page here"
    for name, (who, page, action) in table.items():
        client.force_login(getattr(cast, who))
        response = client.get(page)
        assert response.status_code == 200, (name, response.status_code)
        found = [f for f in forms_of(response) if (f["action"] or page.split("?")[0]) == action]
        assert found, f"{name}: no form posting to {action} on {page}"
        for form in found:
            token = form["fields"].get(once.FIELD, "")
            assert once.well_formed(token), f"{name}: no token"
