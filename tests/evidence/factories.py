"""Evidence rows for tests, written as the app writes them: an item's reference comes from
its case's EV- counter (under the case's intake lock), a batch opens with its "acquired"
custody event, a custody event is bound by its audit entry (``record_custody``).

Photos taken in through the real pipeline, bytes and all, come from
``tests.evidence.helpers.take_in``; these factories make rows without files."""

import hashlib

import factory
from django.db import transaction
from django.utils import timezone

from evidence.custody_events import record_custody
from evidence.models import CustodyEvent, EvidenceItem, IntakeBatch, StoredFile
from evidence.originals import original_key
from evidence.services import batches, next_references
from tests.factories import CaseFactory, UserFactory


class StoredFileFactory(factory.django.DjangoModelFactory):
    """The row of an original; no bytes in the store (``take_in`` stores real ones)."""

    class Meta:
        model = StoredFile
        django_get_or_create = ("sha256",)

    sha256 = factory.Sequence(lambda n: hashlib.sha256(f"stored file {n}".encode()).hexdigest())
    size = 1
    media_type = "image/jpeg"
    storage_key = factory.LazyAttribute(lambda o: original_key(o.sha256))


class EvidenceItemFactory(factory.django.DjangoModelFactory):
    """An item of ``case``, numbered by the case's counter as intake numbers them."""

    class Meta:
        model = EvidenceItem

    case = factory.SubFactory(CaseFactory)
    reference = factory.LazyAttribute(lambda o: next_references(o.case, 1)[0])
    kind = "photo"
    title = factory.LazyAttribute(lambda o: o.reference)
    original_filename = factory.LazyAttribute(lambda o: f"{o.reference}.jpg")
    original_path = factory.LazyAttribute(lambda o: f"DCIM/{o.original_filename}")
    original = factory.SubFactory(StoredFileFactory)

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        with transaction.atomic():  # the reference's lock is held until the item is in
            return super()._create(model_class, *args, **kwargs)


class IntakeBatchFactory(factory.django.DjangoModelFactory):
    """A batch opened as ``services.create_batch`` opens one: with the medium's
    "acquired" custody event and its ``evidence.batch_open`` audit entry."""

    class Meta:
        model = IntakeBatch

    case = factory.SubFactory(CaseFactory)
    created_by = factory.SubFactory(UserFactory)
    source_root = factory.Sequence(lambda n: f"/media/card{n}")
    acquired_from = "Witness W-0001"

    @classmethod
    def _create(cls, model_class, *, created_by, **fields):
        with transaction.atomic():
            return batches._create_batch(actor=created_by, **fields)


class CustodyEventFactory(factory.django.DjangoModelFactory):
    """A custody event of an item, bound by its ``evidence.custody`` audit entry."""

    class Meta:
        model = CustodyEvent

    item = factory.SubFactory(EvidenceItemFactory)
    actor = factory.SubFactory(UserFactory)
    action = CustodyEvent.Action.STORED
    at = factory.LazyFunction(timezone.now)
    location = "evidence room, shelf 3"
    purpose = "moved to the evidence room"
    sha256 = factory.LazyAttribute(lambda o: o.item.original.sha256)
    hash_result = CustodyEvent.HashResult.MATCH

    @classmethod
    def _create(cls, model_class, *, item, actor, **fields):
        (pk,) = record_custody(
            [dict(case_id=item.case_id, item_id=item.pk, actor_id=actor.pk, **fields)],
            actor=actor,
            action="evidence.custody",
            target=item,
            case=item.case,
            custody_action=fields["action"],
            hash_result=fields["hash_result"],
        )
        return model_class.objects.get(pk=pk)
