"""Exact query counts of the people pages and of a reveal, as a lead and as an
investigator: a page that starts asking the database once per row, or twice the same
question, fails here (ceilings would let it creep up)."""

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from people import services
from tests.factories import register_person

pytestmark = pytest.mark.django_db

# PostgreSQL takes the audit chain's advisory lock before each entry a request appends.
LOCK = 1 if connection.vendor == "postgresql" else 0


@pytest.fixture
def interviewed(cast):
    """A High-protection witness the lead registered and the investigator interviewed,
    with consent in force and a testimony of two versions."""
    witness = register_person(cast.case, cast.lead, protection_level="high", name_ar="سلمى")
    for scopes in (["investigation"], ["prosecution", "recontact"]):
        services.record_consent(
            actor=cast.lead,
            case=cast.case,
            person=witness,
            scopes=scopes,
            how="written",
            given_on=timezone.now().date(),
        )
    testimony = services.create_testimony(
        actor=cast.lead,
        case=cast.case,
        witness=witness,
        text="رأيت ابني يُقتاد إلى الفرع.",
        taken_at=timezone.now(),
        language="ar",
        mode="in_person",
        interviewers=[cast.investigator],
    )
    services.revise_testimony(
        actor=cast.investigator,
        testimony=testimony,
        text="رأيت ابني يُقتاد إلى الفرع في الشتاء.",
        reason="read back to the witness",
    )
    return witness, testimony


def _exactly(client, django_assert_num_queries, count, method, url, data=None):
    getattr(client, method)(url, data)  # the session and caches warm
    with django_assert_num_queries(count) as captured:
        response = getattr(client, method)(url, data)
    assert response.status_code == 200
    response.queries = [q["sql"] for q in captured.captured_queries]
    return response


# The testimony page carries legal's panels: its review (decisions), its assessments, links
# and comments, and for a lawyer or lead the catalogue of elements to link to; whether the
# viewer is a system admin is asked once, for the header and the panels alike. The person
# page asks once whether a reveal found one of the person's sealed values broken.
@pytest.mark.parametrize(
    ("who", "person", "testimony"), [("lead", 21, 21), ("investigator", 22, 21)]
)
def test_the_person_and_testimony_pages_cost_exactly(
    client, cast, interviewed, django_assert_num_queries, who, person, testimony
):
    witness, statement = interviewed
    client.force_login(getattr(cast, who))
    page = _exactly(
        client, django_assert_num_queries, person + LOCK, "get", witness.get_absolute_url()
    )
    assert page.context["reveal_form"] is not None  # both may reveal this witness
    page = _exactly(
        client, django_assert_num_queries, testimony + LOCK, "get", statement.get_absolute_url()
    )
    assert "في الشتاء" in page.content.decode()


def test_a_reveal_costs_exactly_and_asks_who_interviewed_once(
    client, cast, interviewed, django_assert_num_queries
):
    witness, _statement = interviewed
    client.force_login(cast.investigator)
    url = reverse("people:person_reveal", args=[cast.case.reference, witness.code])
    page = _exactly(
        client, django_assert_num_queries, 24 + LOCK, "post", url, {"reason": "matching a photo"}
    )
    assert "سلمى" in page.content.decode()
    # The evidence panel's two listings carry the same rule as a subquery of their own
    # query (which items are withheld, to leave their "graphic" label out): no question
    # of their own.
    interviewer_checks = [
        sql
        for sql in page.queries
        if "people_testimony_interviewers" in sql and "evidence_evidenceitem" not in sql
    ]
    assert len(interviewer_checks) == 1
