import datetime

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from casefiles.models import AuditEntry
from people import services
from people.models import Consent
from tests.factories import register_person

pytestmark = pytest.mark.django_db

DAY = datetime.date(2026, 11, 3)


@pytest.fixture
def testimony(cast):
    witness = register_person(cast.case, cast.investigator)
    return services.create_testimony(
        actor=cast.investigator,
        case=cast.case,
        witness=witness,
        text="Statement.",
        taken_at=timezone.now(),
        language="en",
        mode="video",
    )


def _consent(cast, testimony, scopes, bodies=""):
    return services.record_consent(
        actor=cast.investigator,
        case=cast.case,
        person=testimony.witness,
        scopes=scopes,
        how="oral_recorded",
        given_on=DAY,
        bodies=bodies,
    )


def test_without_consent_nothing_may_be_shared(testimony):
    answer = services.may_share_testimony(testimony=testimony, purpose="prosecution")
    assert not answer
    assert answer.reason == "No consent for this purpose."


def test_consent_allows_exactly_its_scopes(cast, testimony):
    consent = _consent(cast, testimony, ["investigation", "prosecution"])
    answer = services.may_share_testimony(testimony=testimony, purpose="prosecution")
    assert answer and answer.consent == consent
    assert not services.may_share_testimony(testimony=testimony, purpose="publication")


def test_sharing_is_allowed_only_with_the_bodies_named(cast, testimony):
    _consent(cast, testimony, ["sharing"], bodies="IIIM\nUN Commission of Inquiry")
    assert services.may_share_testimony(testimony=testimony, purpose="sharing", body="iiim")
    assert not services.may_share_testimony(
        testimony=testimony, purpose="sharing", body="A newspaper"
    )


def test_sharing_consent_must_name_bodies(cast, testimony):
    with pytest.raises(ValidationError):
        _consent(cast, testimony, ["sharing"])
    assert not Consent.objects.exists()


def test_withdrawal_is_a_new_record_and_ends_the_consent(cast, testimony):
    consent = _consent(cast, testimony, ["investigation", "publication"])
    services.withdraw_consent(
        actor=cast.investigator,
        consent=consent,
        how="written",
        given_on=DAY,
        scopes=["publication"],
    )
    assert Consent.objects.count() == 2
    consent.refresh_from_db()
    assert consent.scopes == ["investigation", "publication"]
    answer = services.may_share_testimony(testimony=testimony, purpose="publication")
    assert not answer and "withdrawn" in answer.reason
    assert services.may_share_testimony(testimony=testimony, purpose="investigation")
    actions = list(
        AuditEntry.objects.filter(action__startswith="consent.").values_list("action", flat=True)
    )
    assert actions == ["consent.record", "consent.withdraw"]


def test_a_later_consent_counts_after_a_withdrawal(cast, testimony):
    first = _consent(cast, testimony, ["publication"])
    services.withdraw_consent(actor=cast.investigator, consent=first, how="written", given_on=DAY)
    assert not services.may_share_testimony(testimony=testimony, purpose="publication")
    _consent(cast, testimony, ["publication"])
    assert services.may_share_testimony(testimony=testimony, purpose="publication")


def test_consent_for_another_case_does_not_count(cast, other_case, testimony):
    from casefiles.models import Membership

    Membership.objects.create(user=cast.investigator, case=other_case, role="investigator")
    services.add_case_role(
        actor=cast.investigator, person=testimony.witness, case=other_case, role="witness"
    )
    services.record_consent(
        actor=cast.investigator,
        case=other_case,
        person=testimony.witness,
        scopes=["publication"],
        how="written",
        given_on=DAY,
    )
    assert not services.may_share_testimony(testimony=testimony, purpose="publication")


def test_consent_records_cannot_be_changed_or_deleted(cast, testimony):
    consent = _consent(cast, testimony, ["investigation"])
    table = Consent._meta.db_table
    for sql, params in [
        (f'UPDATE "{table}" SET scopes = %s', ['["publication"]']),
        (f'DELETE FROM "{table}"', []),
    ]:
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
    with pytest.raises(TypeError):
        consent.save()
    assert Consent.objects.get().scopes == ["investigation"]
