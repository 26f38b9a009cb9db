"""The lead's page of who saw a person shows why each reveal of the identity was made."""

import pytest
from django.urls import reverse

from casefiles.models import AuditEntry
from people import services
from tests.factories import register_person

pytestmark = pytest.mark.django_db


def test_who_saw_this_person_shows_the_reason_of_each_reveal(client, cast):
    person = register_person(cast.case, cast.investigator)
    reasons = {
        cast.investigator: "Preparing the interview of 3 March",
        cast.lead: "التحقق من تهجئة الاسم للمحكمة",
    }
    for user, reason in reasons.items():
        services.reveal_identity(actor=user, case=cast.case, person=person, reason=reason)
    client.force_login(cast.lead)
    url = reverse(
        "casefiles:case_target_audit", args=[cast.case.reference, "people.person", person.pk]
    )
    html = client.get(url).content.decode()
    assert "Reason given" in html
    for reason in reasons.values():
        assert reason in html
    # Beside the reveal it belongs to, in that reveal's row.
    seq = AuditEntry.objects.get(action="people.reveal_identity", actor=cast.lead).seq
    row = html.split(f"<td>{seq}</td>", 1)[1].split("</tr>", 1)[0]
    assert reasons[cast.lead] in row and reasons[cast.investigator] not in row
