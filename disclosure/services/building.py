"""Building an approved package: access and contents checked again, the bag written and
signed and checked by the verifier it carries, its tar file stored once (to be issued
again byte for byte), and an ``exported`` custody event for each item, bound by the
build's audit entry.

``start_build`` marks the package ``building`` (audited); ``run_build`` does the work
(from the command, or the task the package's page queues); a failure marks it ``failed``
with the reason (audited), and it may be built again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from casefiles import audit, checkpoints
from casefiles.access import Action, Role, can, role_in
from casefiles.services import one_person_refusal
from evidence.custody_events import record_custody
from evidence.models import CustodyEvent
from evidence.services import NOTE_EXPORTED, NOTE_REDACTED_SENT
from evidence.storage import evidence_storage

from .. import anchoring, excerpt, exporting, report, verifier
from ..bag import PROFILE_ID, REPORT, VERIFY_PY, BagWriter, TarWriter, store_once, tar_member
from ..bag import VERIFY_TXT as VERIFY_TXT_NAME
from ..contents import as_recorded_refusal, review
from ..models import Package
from ..verify_text import VERIFY_TXT

NOT_REDACTED = exporting.NOT_REDACTED

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

S = Package.Status
VERIFIER = Path(__file__).resolve().parent.parent / "verifier.py"
VERIFIER_BYTES = VERIFIER.read_bytes()
PROFILE = Path(__file__).resolve().parent.parent / "profile" / "athar-disclosure-profile.json"
PROGRESS_EVERY = 50


def athar_version() -> str:
    """The release of Athar that built the package (bag-info.txt's Athar-Version)."""
    try:
        return importlib.metadata.version("athar")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class BuildRefused(Exception):
    """What changed since the approval, in words: the package is not built."""


class BagDoesNotVerify(Exception):
    """The bag just written fails the verifier it carries: it is not issued."""


def start_build(*, actor: Account | None, package: Package) -> Package:
    """An approved (or failed) package starts building; ``actor`` None: the system."""
    if actor is not None and not can(actor, Action.EXPORT, package.case):
        raise PermissionDenied(_("Your role in this case does not allow disclosure."))
    # Approved before the rule of decision 0022 by one admin's two accounts: not built.
    if refusal := one_person_refusal(package.requested_by_id, package.decided_by_id):
        raise ValidationError(refusal)
    with transaction.atomic(durable=True):
        row = Package.objects.select_for_update().get(pk=package.pk)
        if row.status not in (S.APPROVED, S.FAILED):
            raise ValidationError(
                _("This package is %(status)s: that step is not open.")
                % {"status": row.get_status_display()}
            )
        row.status, row.done, row.error = S.BUILDING, 0, ""
        row.save(update_fields=["status", "done", "error"])
        audit.record(actor, "disclosure.build_start", target=row, case=package.case)
    row.case = package.case
    return row


def fail_build(package: Package, error: str) -> None:
    with transaction.atomic(durable=True):
        Package.objects.filter(pk=package.pk).update(status=S.FAILED, error=error[:2000])
        audit.record(
            None, "disclosure.build_failed", target=package, case=package.case, error=error[:2000]
        )


def _check_again(package: Package) -> None:
    """Access and contents as at the approval, or the reason they are not."""
    case = package.case
    if not can(package.requested_by, Action.EXPORT, case):
        raise BuildRefused(_("Who requested the package may no longer disclose in this case."))
    if package.decided_by is None or role_in(package.decided_by, case) != Role.LEAD:
        raise BuildRefused(_("Who approved the package is no longer a lead of this case."))
    found = review(package.requested_by, package)
    if why := as_recorded_refusal(found, package.contents.get("kept_fields", {})):
        raise BuildRefused(_("Changed since the approval: %(why)s") % {"why": why})
    now_in = {(line.kind, line.pk) for line in found.included}
    redacted = {str(line.pk): line.redaction for line in found.items if line.redaction}
    if redacted != package.contents.get("redacted", {}):
        raise BuildRefused(_("Changed since the approval: a redacted copy was drawn or replaced."))
    lines = {(line.kind, line.pk): line for line in found.not_approved + found.refused}
    for kind, key in (("item", "items"), ("testimony", "testimonies")):
        for pk in package.contents.get(key, []):
            if (kind, pk) not in now_in:
                line = lines.get((kind, pk))
                why = f"{line.ref}: {line.reason}" if line else f"{kind} {pk}: no longer selected"
                raise BuildRefused(_("Changed since the approval: %(why)s") % {"why": why})


def _progress(package: Package, done: int) -> None:
    Package.objects.filter(pk=package.pk).update(done=done)


def write_bag(
    package: Package, root: Path, tar: TarWriter | None = None, *, keep_payload: bool = True
) -> tuple[bytes, dict]:
    """The package's bag: its tag files in the new folder ``root``, its payload read once
    from the store into ``tar`` and, with ``keep_payload``, into ``root/data`` too.
    Returns tagmanifest-sha256.txt and what the build's audit entry records."""
    bag = BagWriter(root, tar, keep_payload=keep_payload)
    renderer = ThreadPoolExecutor(1, thread_name_prefix="report")
    try:
        return _write_bag(package, bag, renderer)
    finally:
        bag.close()
        renderer.shutdown(wait=False, cancel_futures=True)


def _write_bag(
    package: Package, bag: BagWriter, renderer: ThreadPoolExecutor
) -> tuple[bytes, dict]:
    case = package.case
    items, testimonies = exporting.items_of(package), exporting.testimonies_of(package)
    redactions = exporting.redactions_of(package)
    # 1. The payload declared as the store recorded it, and every tag file the report is
    # drawn from written, before a byte of the payload is copied.
    sources = []  # (item pk, name in data/, storage key)
    for n, item in enumerate(items, 1):
        redaction = redactions.get(item.pk)
        if redaction is not None:
            name = f"redacted/{exporting.export_id(package, n)}.jpg"
            bag.declare(name, redaction.sha256, redaction.size)
            sources.append((item.pk, name, redaction.storage_key))
        else:
            name = f"originals/{exporting.file_name(package, n, item)}"
            bag.declare(name, item.original.sha256, item.original.size)
            sources.append((item.pk, name, item.original.storage_key))
    rows, named = exporting.item_rows(package, items, {}, redactions)  # SHA-512s to come
    statements, testimony_docs = [], []
    for row, text in exporting.testimony_rows(package, testimonies, named):
        data = text.encode("utf-8")
        if hashlib.sha256(data).hexdigest() != row["sha256"]:
            raise BuildRefused(_("%(reference)s: the statement does not match its hash.") % row)
        bag.declare(f"testimony/{row['file']}", row["sha256"], len(data))
        statements.append((f"testimony/{row['file']}", data))
        testimony_docs.append(row)
    custody = exporting.custody_of(items)
    entries = excerpt.audit_excerpt(case, items, testimonies, custody)
    checkpoint = anchoring.package_checkpoint(max((e.seq for e in entries), default=1))
    # The log's leaves, read once for every proof of the build.
    tree = anchoring.Tree(checkpoints.stored_leaves()[: checkpoint.size])
    checkpoint_doc, proved_from = anchoring.checkpoint_doc(package, checkpoint, tree)
    for item, row in zip(items, rows, strict=True):
        events = custody.get(item.pk, [])
        doc = {"export_id": row["export_id"], "reference": item.reference, "events": events}
        doc["sha256"] = item.original.sha256
        bag.add_tag(f"metadata/custody/{row['export_id']}.json", exporting.dumps(doc))
    bag.add_tag("metadata/items.json", exporting.dumps(rows))
    bag.add_tag("metadata/items.csv", exporting.items_csv(rows))
    bag.add_tag("metadata/testimonies.json", exporting.dumps(testimony_docs))
    withheld = excerpt.withheld_details(entries, items, redactions)
    docs = [excerpt.entry_doc(e, withheld.get(e.seq, "")) for e in entries]
    lines = [exporting.dumps(doc).replace(b"\n", b"") for doc in docs]
    bag.add_tag("metadata/audit/entries.jsonl", b"".join(line + b"\n" for line in lines))
    bag.add_tag("metadata/audit/checkpoint.json", exporting.dumps(checkpoint_doc))
    bag.add_tag(
        "metadata/audit/proofs.json", exporting.dumps(tree.inclusion(entries, checkpoint.size))
    )
    left_out = review(package.requested_by, package)
    bag.add_tag("metadata/package.json", exporting.dumps(_package_doc(package, left_out, named)))
    bag.add_tag("metadata/athar-disclosure-profile.json", PROFILE.read_bytes())
    for name, data in report.thumbnail_tags(package, items, redactions).items():
        bag.add_tag(name, data)
    key = checkpoints.signing_key()
    bag.add_public_key(key)
    fingerprint = verifier.fingerprint(key.public_key().public_bytes_raw())
    bag.add_tag(
        VERIFY_TXT_NAME, VERIFY_TXT.format(code=package.code, fingerprint=fingerprint).encode()
    )
    bag.add_tag(VERIFY_PY, VERIFIER_BYTES)
    bag.write_declaration(_bag_info(package))
    # 2. The custody report, drawn from those files, on the second core while the payload
    # copies (hashing and writing release the interpreter's lock).
    started = time.perf_counter()
    rendering = renderer.submit(_render_report, bag.root)
    # 3. The payload, each file read once: hashed, checked and written.
    store = evidence_storage()
    digests: dict[int, dict[str, str]] = {}
    for n, (pk, name, storage_key) in enumerate(sources, 1):
        with store.open(storage_key) as source:
            digests[pk] = bag.add_payload(name, source)
        if n % PROGRESS_EVERY == 0:
            _progress(package, n)
    for name, data in statements:
        bag.add_payload_bytes(name, data)
    copied = time.perf_counter()
    for item, row in zip(items, rows, strict=True):
        if item.pk not in redactions:
            row["sha512"] = digests[item.pk]["sha512"]
    bag.add_tag("metadata/items.json", exporting.dumps(rows))
    bag.add_tag("metadata/items.csv", exporting.items_csv(rows))
    pdf, render_s = rendering.result()
    waited = time.perf_counter() - copied
    bag.add_tag(REPORT, pdf)
    tagmanifest = bag.finish()
    bag.sign(key, tagmanifest)
    _progress(package, len(items))
    details = {
        "items": [r["reference"] for r in rows],
        "testimonies": [r["reference"] for r in testimony_docs],
        "redacted": [r["reference"] for r in rows if r["redaction"] != NOT_REDACTED],
        "named": named,
        "withheld_details": sorted(withheld),  # the excerpt's entries given by their digest
        "checkpoint": checkpoint.size,
        "consistency_from": proved_from,
        "report_sha256": hashlib.sha256(pdf).hexdigest(),
        "tagmanifest_sha256": hashlib.sha256(tagmanifest).hexdigest(),
    }
    built = {
        "details": details,
        "items": items,
        "digests": digests,
        "redacted": set(redactions),
        "payload": bag.verification_digests(),
        # How long the copy and the report took, and how long the report was waited for.
        "timing": {"copy_s": copied - started, "render_s": render_s, "waited_s": waited},
    }
    return tagmanifest, built


def _render_report(root: Path) -> tuple[bytes, float]:
    start = time.perf_counter()
    pdf = report.render_from_bag(root)
    return pdf, time.perf_counter() - start


def _bag_info(package: Package) -> list[tuple[str, str]]:
    decided = package.decided_at or timezone.now()
    return [
        ("Source-Organization", settings.ATHAR_CHECKPOINT_ORIGIN),
        ("External-Identifier", package.code),
        ("Bagging-Date", decided.date().isoformat()),
        ("Bag-Group-Identifier", package.case.reference),
        ("BagIt-Profile-Identifier", PROFILE_ID),
        ("Recipient", package.recipient),
        ("Recipient-Case-Reference", package.recipient_reference or "-"),
        ("Purpose", package.purpose),
        ("Internal-Sender-Identifier", f"{package.case.reference}/{package.code}"),
        ("Athar-Version", athar_version()),
        ("Verifier-SHA256", hashlib.sha256(VERIFIER_BYTES).hexdigest()),
    ]


def build_bag(
    package: Package, root: Path, out: BinaryIO, *, keep_payload: bool = True
) -> tuple[bytes, dict, str, int]:
    """The bag written (``write_bag``), checked by the verifier it carries (the payload by
    the digests taken while copying it, every tag file read again), and its tar written to
    ``out``. Returns tagmanifest-sha256.txt, the build's record, the tar's SHA-256 and size."""
    decided = package.decided_at or timezone.now()
    tar = TarWriter(out, package.code, int(decided.timestamp()))
    tagmanifest, built = write_bag(package, root, tar, keep_payload=keep_payload)
    # What the court will run, run here first: a bag that does not verify offline
    # (a tag file changed on the disk meanwhile, a fault of the build) is never issued.
    try:
        verifier.verify(root, payload_digests=built["payload"])
    except verifier.Failure as exc:
        raise BagDoesNotVerify(str(exc)) from None
    tar.add_tags(root, _tag_files_of(root))
    sha256, size = tar.close()
    return tagmanifest, built, sha256, size


def _tag_files_of(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.relative_to(root).as_posix().startswith("data/")
    )


def _package_doc(package: Package, found, named: dict[str, list[str]]) -> dict:
    return {
        "package": package.code,
        "case": package.case.reference,
        "recipient": package.recipient,
        "recipient_reference": package.recipient_reference,
        "purpose": package.purpose,
        "requested_by": package.requested_by.get_username(),
        "requested_at": exporting.plain(package.requested_at),
        "approved_by": package.decided_by.get_username() if package.decided_by else "",
        "approved_at": exporting.plain(package.decided_at),
        "named": named,
        "pseudonymised": {line.ref: line.redactions for line in found.included},
        "left_out": {
            "not_approved_in_review": {line.ref: line.reason for line in found.not_approved},
            "refused": {line.ref: line.reason for line in found.refused},
        },
    }


def run_build(package: Package, out: Path | None = None) -> Package:
    """Build a package marked ``building``: its tar file stored, and the bag also kept as
    a folder in ``out`` (a new folder) if given; else its tag files go to a scratch
    folder removed afterwards and its payload only into the tar. On any error the
    package is marked failed."""
    package = Package.objects.select_related("case", "requested_by", "decided_by").get(
        pk=package.pk
    )
    if package.status != S.BUILDING:
        raise ValidationError(_("Only a package being built is built."))
    stored = package.stored_path
    stored.parent.mkdir(parents=True, exist_ok=True)
    scratch = tmp = None
    try:
        _check_again(package)
        if out is None:
            scratch = Path(tempfile.mkdtemp(prefix=f"{package.code}-", dir=stored.parent))
            root = scratch / package.code
        else:
            root = out
        fd, name = tempfile.mkstemp(dir=stored.parent, prefix=f"{package.code}-", suffix=".tar")
        tmp = Path(name)
        with os.fdopen(fd, "wb") as fh:
            tagmanifest, built, sha256, size = build_bag(
                package, root, fh, keep_payload=out is not None
            )
        if stored.exists():
            stored.unlink()  # a failed build's file never reached ``ready``: not issued
        store_once(tmp, stored)
        tmp = None
        _finish(package, sha256, size, tagmanifest, built)
    except Exception as exc:
        fail_build(package, f"{type(exc).__name__}: {exc}")
        raise
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    package.refresh_from_db()
    package.timing = built["timing"]  # type: ignore[attr-defined]
    return package


def bag_report(package: Package) -> bytes:
    """The custody report a built package's bag holds, read from its stored tar file (a
    package built before the report went into the bag: rendered from the tar's files)."""
    pdf = tar_member(package.stored_path, package.code, REPORT)
    return pdf if pdf is not None else report.package_report(package)


def _finish(package: Package, sha256: str, size: int, tagmanifest: bytes, built: dict) -> None:
    now = timezone.now()
    purpose = f"{package.get_purpose_display()}: {package.code}"
    if package.recipient_reference:
        purpose += f" ({package.recipient_reference})"
    events = [
        dict(
            case_id=package.case_id,
            item_id=item.pk,
            action=CustodyEvent.Action.EXPORTED,
            at=now,
            actor_id=None,
            from_custodian=settings.ATHAR_CHECKPOINT_ORIGIN,
            to_custodian=package.recipient[:200],
            purpose=purpose[:300],
            sha256="" if item.pk in built["redacted"] else built["digests"][item.pk]["sha256"],
            hash_result="" if item.pk in built["redacted"] else CustodyEvent.HashResult.MATCH,
            notes="; ".join(
                [NOTE_EXPORTED % {"package": package.code, "sha256": sha256}]
                + (
                    [NOTE_REDACTED_SENT % {"sha256": built["digests"][item.pk]["sha256"]}]
                    if item.pk in built["redacted"]
                    else []
                )
            ),
        )
        for item in built["items"]
    ]
    with transaction.atomic(durable=True):
        Package.objects.filter(pk=package.pk).update(
            status=S.READY,
            built_at=now,
            sha256=sha256,
            size=size,
            tagmanifest_sha256=hashlib.sha256(tagmanifest).hexdigest(),
            done=package.total,
        )
        record_custody(
            events,
            actor=None,
            action="disclosure.build",
            target=package,
            case=package.case,
            sha256=sha256,
            size=size,
            recipient=package.recipient,
            purpose=package.purpose,
            **built["details"],
        )
