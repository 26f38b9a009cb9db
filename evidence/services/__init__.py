"""Writes to evidence, one module per concern; each write is audited.

- ``words``: the app's own words in custody records and provenance
- ``leases``: who is taking a batch in, and for how long
- ``batches``: intake batches opened, found again, interrupted; the case's intake lock
- ``intake_rows``: one chunk of intake results written
- ``manifests``: a batch closed with its hashed manifest and the custodian's list checked
- ``custody``: downloads, custody recorded by hand, originals re-hashed
- ``fixity``: sweeps re-hashing every stored original, in chunks
- ``derivatives``: thumbnails and previews made again from the verified original, and
  the blurred thumbnails of graphic items
- ``graphic``: items marked graphic (or no longer), a selection or a batch at a time
- ``items``: what is said about an item, and who is identified in it

Near-duplicate groups live in ``evidence.near_duplicates``. Every public name is here
too: ``from evidence import services; services.record_intake(...)``.
"""

from .batches import (
    create_batch,
    done_source_keys,
    find_resumable_batch,
    holds_same_files,
    interrupt_batch,
    lock_case_intake,
    open_batch,
    record_name_encoding,
    resumable_batch,
)
from .custody import (
    RECORDABLE_CUSTODY,
    open_verified,
    record_custody_event,
    record_download,
    rehash,
    set_integrity,
    verify_custody,
)
from .derivatives import (
    blurred_thumbnail,
    ensure_preview,
    make_missing_thumbnails,
    remake_thumbnail,
)
from .fixity import run_fixity
from .graphic import mark_batch_graphic, may_mark_graphic, set_graphic
from .intake_rows import next_references, record_intake, refresh_batch_counts
from .items import record_identification, update_item
from .leases import LEASE, claim_batch, owner_known_dead, release_batch
from .manifests import finish_batch
from .words import (
    CHECKED_CUSTODIAN_LIST,
    CHECKED_MANIFEST,
    METHOD_COPIED,
    METHOD_UPLOADED,
    NOTE_EXPORTED,
    NOTE_FIRST_READ,
    NOTE_FOUND,
    NOTE_MEDIUM,
    NOTE_NOT_IN_STORE,
    NOTE_REDACTED_SENT,
    NOTE_REVERIFIED,
    NOTE_STORE_DIFFERS,
    NOTE_UNREADABLE,
    OWN_NUMBERED,
    OWN_WORDS,
    PURPOSE_FIXITY,
    PURPOSE_INTAKE,
)

__all__ = [
    "CHECKED_CUSTODIAN_LIST",
    "CHECKED_MANIFEST",
    "LEASE",
    "METHOD_COPIED",
    "METHOD_UPLOADED",
    "NOTE_EXPORTED",
    "NOTE_FIRST_READ",
    "NOTE_FOUND",
    "NOTE_MEDIUM",
    "NOTE_NOT_IN_STORE",
    "NOTE_REDACTED_SENT",
    "NOTE_REVERIFIED",
    "NOTE_STORE_DIFFERS",
    "NOTE_UNREADABLE",
    "OWN_NUMBERED",
    "OWN_WORDS",
    "PURPOSE_FIXITY",
    "PURPOSE_INTAKE",
    "RECORDABLE_CUSTODY",
    "blurred_thumbnail",
    "claim_batch",
    "create_batch",
    "done_source_keys",
    "ensure_preview",
    "find_resumable_batch",
    "finish_batch",
    "holds_same_files",
    "interrupt_batch",
    "lock_case_intake",
    "make_missing_thumbnails",
    "mark_batch_graphic",
    "may_mark_graphic",
    "next_references",
    "open_batch",
    "open_verified",
    "owner_known_dead",
    "record_custody_event",
    "record_download",
    "record_identification",
    "record_intake",
    "record_name_encoding",
    "refresh_batch_counts",
    "rehash",
    "release_batch",
    "remake_thumbnail",
    "resumable_batch",
    "run_fixity",
    "set_graphic",
    "set_integrity",
    "update_item",
    "verify_custody",
]
