"""Many evidence items at once, for the tests of the workspace and of bulk actions: rows
written in bulk (no files), numbered by the case's EV- counter as intake numbers them."""

import hashlib

from django.db import transaction

from evidence.models import EvidenceItem, StoredFile
from evidence.originals import original_key
from evidence.services import next_references


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
