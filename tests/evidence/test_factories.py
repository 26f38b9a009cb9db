"""The evidence factories write rows as the app does: numbered by the case's counter,
each custody event bound into the audit chain."""

import pytest

from casefiles.audit import verify_chain
from casefiles.models import AuditEntry
from evidence.models import CustodyEvent, EvidenceCounter
from tests.evidence.factories import CustodyEventFactory, EvidenceItemFactory, IntakeBatchFactory

pytestmark = pytest.mark.django_db


def test_items_are_numbered_by_their_case_counter(case):
    items = EvidenceItemFactory.create_batch(3, case=case)
    assert [i.reference for i in items] == ["EV-000001", "EV-000002", "EV-000003"]
    assert EvidenceCounter.objects.get(case=case).last == 3


def test_a_batch_opens_with_its_acquired_event_and_custody_events_are_bound(case, taker):
    batch = IntakeBatchFactory(case=case, created_by=taker)
    assert batch.custody_events.get().action == CustodyEvent.Action.ACQUIRED
    event = CustodyEventFactory(item=EvidenceItemFactory(case=case), actor=taker)
    assert AuditEntry.objects.filter(action="evidence.custody", target_id=str(event.item_id))
    assert verify_chain().ok
