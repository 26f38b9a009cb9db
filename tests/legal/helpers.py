"""Many evidence items at once, for the tests of the workspace and of bulk actions: rows
written in bulk (no files), numbered by the case's EV- counter as intake numbers them."""

import hashlib

from django.db import transaction
from django.utils import timezone

from evidence import services as evidence_services
from evidence.models import EvidenceItem, StoredFile
from evidence.originals import original_key
from evidence.services import next_references
from people import services as people_services
from people.models import Identity


def many_items(case, count: int, **fields) -> list[EvidenceItem]:
    with transaction.atomic():
        references = next_references(case, count)
        digests = {
            ref: hashlib.sha256(f"{case.reference} {ref}".encode()).hexdigest()
            for ref in references
        }
        StoredFile.objects.bulk_create(
            StoredFile(sha256=d, size=1, media_type="image/jpeg", storage_key=original_key(d))
            for d in digests.values()
        )
        originals = dict(
            StoredFile.objects.filter(sha256__in=digests.values()).values_list("sha256", "pk")
        )
        EvidenceItem.objects.bulk_create(
            EvidenceItem(
                case=case,
                reference=ref,
                kind="photo",
                original_filename=f"{ref}.jpg",
                original_path=f"DCIM/{ref}.jpg",
                original_id=originals[digests[ref]],
                **fields,
            )
            for ref in references
        )
    return list(EvidenceItem.objects.filter(case=case, reference__in=references).order_by("pk"))


def withheld_item(cast, photos):
    """``photos[0]`` attached to the statement of a Critical protection witness: the
    investigator, who did not register the witness, may not read it."""
    witness = people_services.register_person(
        actor=cast.lead,
        case=cast.case,
        role="witness",
        identity=Identity(name_ar="هالة"),
        protection_level="critical",
    )
    testimony = people_services.create_testimony(
        actor=cast.lead,
        case=cast.case,
        witness=witness,
        text="They took us to the branch at dawn.",
        taken_at=timezone.now(),
        language="en",
        mode="in_person",
        interviewers=[],
    )
    item = photos[0]
    evidence_services.update_item(actor=cast.lead, item=item, tags=["morgue"], testimony=testimony)
    return item
