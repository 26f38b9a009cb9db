"""Evidence: stored originals, items, provenance, chain of custody, intake and fixity.

Originals are content-addressed (``StoredFile``, one row per distinct SHA-256) and never
changed or deleted; ``EvidenceItem`` is what a case holds: one per file taken in, even
when the bytes are already stored. Custody events are append-only at the database.
"""

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from casefiles.querysets import AppendOnly, CaseScopedQuerySet
from casefiles.reviewing import ReviewStatus


class StoredFile(models.Model):
    sha256 = models.CharField(max_length=64, unique=True)
    size = models.BigIntegerField()
    media_type = models.CharField(max_length=100)
    storage_key = models.CharField(max_length=100, unique=True)
    md5 = models.CharField(max_length=32, blank=True)
    sha1 = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("stored file")

    def __str__(self) -> str:
        return f"sha256:{self.sha256[:16]}…"


class IntakeBatch(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("Waiting")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        INCOMPLETE = "incomplete", _("Done, some files could not be stored")
        INTERRUPTED = "interrupted", _("Interrupted")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="intake_batches")
    label = models.CharField(_("label"), max_length=200)
    source_root = models.TextField(_("source"), help_text=_("The folder or ZIP taken in."))
    # A ZIP taken in from the command line: the archive's own hash, as handed over.
    source_sha256 = models.CharField(max_length=64, blank=True)
    source_size = models.BigIntegerField(null=True, blank=True)
    acquired_from = models.CharField(_("acquired from"), max_length=200)
    medium = models.CharField(_("medium"), max_length=200, blank=True)
    medium_serial = models.CharField(_("medium serial"), max_length=100, blank=True)
    method = models.CharField(_("method"), max_length=100, blank=True)
    # How the names in a ZIP written without the UTF-8 flag were read, when named
    # (ingest --zip-encoding): part of how each item's original path was derived.
    name_encoding = models.CharField(_("ZIP name encoding"), max_length=40, blank=True)
    # Every item of the batch is marked graphic as its row is written (ingest --graphic,
    # the upload form's box), and its blurred thumbnail made beside the real one.
    graphic = models.BooleanField(_("graphic content"), default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    total = models.IntegerField(null=True, blank=True)
    seen = models.IntegerField(default=0)
    stored = models.IntegerField(default=0)
    duplicate = models.IntegerField(default=0)
    flagged = models.IntegerField(default=0)
    failed = models.IntegerField(default=0)
    skipped = models.IntegerField(default=0)
    problems = models.JSONField(default=list, blank=True)  # files not stored or skipped
    claimed_by = models.CharField(max_length=100, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    manifest = models.ForeignKey(
        StoredFile, models.PROTECT, null=True, blank=True, related_name="+"
    )  # path, size, sha256 of every file taken in; itself stored and hashed
    custodian_manifest = models.ForeignKey(
        StoredFile, models.PROTECT, null=True, blank=True, related_name="+"
    )

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("intake batch")
        verbose_name_plural = _("intake batches")

    def __str__(self) -> str:
        # Not the label: it is often a file or folder name, i.e. case content, and this
        # string is what audit entries keep as the target's label.
        return f"intake batch #{self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("evidence:batch_detail", args=[self.case.reference, self.pk])

    @property
    def progress(self) -> int | None:
        if not self.total:
            return None
        return min(100, round(100 * self.seen / self.total))


class Tag(models.Model):
    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    name = models.CharField(max_length=60)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["case", "name"], name="tag_per_case")]

    def __str__(self) -> str:
        return self.name


class EvidenceItem(models.Model):
    class Kind(models.TextChoices):
        PHOTO = "photo", _("Photo")
        VIDEO = "video", _("Video")
        AUDIO = "audio", _("Audio")
        DOCUMENT = "document", _("Document")
        PHYSICAL = "physical", _("Physical object")
        DIGITAL = "digital", _("Digital file")
        WEB = "web", _("Web capture")

    ReviewStatus = ReviewStatus  # moved only by legal's review services

    class Integrity(models.TextChoices):
        INTAKE = "intake", _("Hashed at intake")
        VERIFIED = "verified", _("Verified")
        CHANGED = "changed", _("CHANGED since intake")
        MISSING = "missing", _("MISSING from storage")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="evidence_items")
    reference = models.CharField(_("reference"), max_length=16)
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices)
    title = models.CharField(_("title"), max_length=300, blank=True)
    description = models.TextField(_("description"), blank=True)
    original_filename = models.CharField(_("original filename"), max_length=255)
    original_path = models.TextField(_("path on the medium"))
    original = models.ForeignKey(StoredFile, models.PROTECT, related_name="items")
    is_duplicate = models.BooleanField(default=False)
    claimed_date = models.DateField(_("claimed date"), null=True, blank=True)
    claimed_place = models.CharField(_("claimed place"), max_length=200, blank=True)
    source_person = models.ForeignKey(
        "people.Person",
        models.PROTECT,
        null=True,
        blank=True,
        related_name="evidence_given",
        verbose_name=_("source"),
    )
    testimony = models.ForeignKey(  # an attachment: recording, scanned statement, drawing
        "people.Testimony",
        models.PROTECT,
        null=True,
        blank=True,
        related_name="attachments",
        verbose_name=_("attached to testimony"),
    )
    review_status = models.CharField(
        _("review status"), max_length=16, choices=ReviewStatus.choices, default=ReviewStatus.NEW
    )
    # Who last changed what is stated about the item: like its submitter, not its approver.
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    sensitivity = models.CharField(max_length=16, default="confidential")
    tags = models.ManyToManyField(Tag, blank=True, related_name="items")
    batch = models.ForeignKey(
        IntakeBatch, models.PROTECT, null=True, blank=True, related_name="items"
    )
    source_key = models.CharField(max_length=64, blank=True)  # resumability within a batch
    integrity = models.CharField(max_length=16, choices=Integrity.choices, default="intake")
    integrity_checked_at = models.DateTimeField(null=True, blank=True)
    flags = models.JSONField(default=list, blank=True)  # [{"code": ..., "reason": ...}]
    is_flagged = models.BooleanField(default=False)
    phash = models.BigIntegerField(null=True, blank=True)  # 64-bit dHash, signed
    near_group = models.BigIntegerField(null=True, blank=True, db_index=True)
    # Graphic content (the dead, torture): shown blurred until a member reveals it
    # (evidence/graphic.py, docs/decisions/0011-graphic-content.md).
    is_graphic = models.BooleanField(_("graphic content"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["case", "reference"]
        verbose_name = _("evidence item")
        verbose_name_plural = _("evidence items")
        constraints = [
            models.UniqueConstraint(fields=["case", "reference"], name="item_reference_per_case"),
            models.UniqueConstraint(
                fields=["batch", "source_key"],
                condition=~models.Q(source_key=""),
                name="item_once_per_batch_source",
            ),
        ]
        indexes = [
            models.Index(fields=["case", "kind"], name="item_case_kind"),
            # The review workspace filters 55,000 items by these and pages them by
            # reference (keyset): each filter walks its index in the page's order.
            models.Index(fields=["case", "review_status", "reference"], name="item_case_status"),
            models.Index(fields=["case", "sensitivity", "reference"], name="item_case_sensitivity"),
            # The gallery's filters, the same way (decision 0016): a million items in one
            # case, and a filter that matches a few of them reads only those.
            models.Index(fields=["case", "integrity", "reference"], name="item_case_integrity"),
            models.Index(
                fields=["case", "reference"],
                condition=models.Q(is_flagged=True),
                name="item_case_flagged",
            ),
            models.Index(fields=["batch", "reference"], name="item_batch_reference"),
        ]

    def __str__(self) -> str:
        return self.reference

    def get_absolute_url(self) -> str:
        return reverse("evidence:item_detail", args=[self.case.reference, self.reference])


class EvidenceCounter(models.Model):
    """Next EV- number of a case, taken under a row lock."""

    case = models.OneToOneField("casefiles.Case", models.PROTECT, primary_key=True)
    last = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"EV counter of case {self.case_id}: {self.last}"


class Derivative(models.Model):
    class Kind(models.TextChoices):
        THUMBNAIL = "thumbnail", _("Thumbnail")
        PREVIEW = "preview", _("Preview")
        REDACTED = "redacted", _("Redacted")
        TRANSCODED = "transcoded", _("Transcoded")
        BLURRED = "blurred", _("Blurred")  # of a graphic item: greyscale, past recognition

    original = models.ForeignKey(StoredFile, models.PROTECT, related_name="derivatives")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    storage_key = models.CharField(max_length=120)
    media_type = models.CharField(max_length=100)
    width = models.IntegerField()
    height = models.IntegerField()
    size = models.IntegerField()
    tool = models.CharField(max_length=100)
    parameters = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["original", "kind"],
                condition=models.Q(kind__in=["thumbnail", "preview", "blurred"]),
                name="one_thumbnail_preview_and_blurred_per_original",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} of {self.original}"


class Provenance(models.Model):
    """How an item came into custody, and the metadata read from it at intake (as read)."""

    item = models.OneToOneField(EvidenceItem, models.PROTECT, related_name="provenance")
    acquired_from = models.CharField(max_length=200)
    acquired_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    acquired_at = models.DateTimeField()
    acquired_where = models.CharField(max_length=200, blank=True)
    method = models.CharField(max_length=100, blank=True)
    medium = models.CharField(max_length=200, blank=True)
    medium_serial = models.CharField(max_length=100, blank=True)
    metadata = models.JSONField(default=dict, blank=True)  # EXIF values as read
    camera_make = models.CharField(max_length=100, blank=True)
    camera_model = models.CharField(max_length=100, blank=True, db_index=True)
    taken_at = models.CharField(max_length=40, blank=True)  # EXIF DateTimeOriginal as read
    taken_date = models.DateField(null=True, blank=True, db_index=True)
    gps_latitude = models.DecimalField(max_digits=10, decimal_places=7, null=True, blank=True)
    gps_longitude = models.DecimalField(max_digits=10, decimal_places=7, null=True, blank=True)
    orientation = models.SmallIntegerField(null=True, blank=True)
    width = models.IntegerField(null=True, blank=True)
    height = models.IntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"provenance of {self.item_id}"


class CustodyQuerySet(AppendOnly, CaseScopedQuerySet):
    pass


class CustodyEvent(models.Model):
    """One link of an item's (or a medium's) chain of custody. Append-only, bound into the
    audit chain: written only through ``custody_events.record_custody``."""

    chain_bound = True

    class Action(models.TextChoices):
        ACQUIRED = "acquired", _("Acquired")
        TRANSFERRED = "transferred", _("Transferred")
        COPIED = "copied", _("Copied")
        ACCESSED = "accessed", _("Accessed")
        ANALYSED = "analysed", _("Analysed")
        EXPORTED = "exported", _("Exported")
        RETURNED = "returned", _("Returned")
        STORED = "stored", _("Stored")

    class HashResult(models.TextChoices):
        MATCH = "match", _("hash matches")
        MISMATCH = "mismatch", _("HASH MISMATCH")
        MISSING = "missing", _("FILE MISSING")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    item = models.ForeignKey(
        EvidenceItem, models.PROTECT, null=True, blank=True, related_name="custody_events"
    )
    batch = models.ForeignKey(
        IntakeBatch, models.PROTECT, null=True, blank=True, related_name="custody_events"
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    at = models.DateTimeField()
    actor = models.ForeignKey(  # None: the system itself (e.g. a scheduled fixity sweep)
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    from_custodian = models.CharField(max_length=200, blank=True)
    to_custodian = models.CharField(max_length=200, blank=True)
    location = models.CharField(max_length=200, blank=True)
    purpose = models.CharField(max_length=300, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)  # what was verified, if anything
    hash_result = models.CharField(max_length=16, choices=HashResult.choices, blank=True)
    notes = models.TextField(blank=True)

    objects = CustodyQuerySet.as_manager()

    class Meta:
        ordering = ["at", "pk"]
        indexes = [models.Index(fields=["item", "at"], name="custody_item_at")]

    def __str__(self) -> str:
        return f"{self.action} {self.at:%Y-%m-%d}"

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise TypeError("Custody events are append-only: add a correcting event instead.")
        raise TypeError(
            "Custody events are written through evidence.custody_events.record_custody, "
            "which binds them into the audit chain."
        )

    def delete(self, *args, **kwargs):
        raise TypeError("Custody events are append-only: they cannot be deleted.")


class ManifestEntry(models.Model):
    """One line of a custodian's checksum list, and what arrived against it."""

    class Result(models.TextChoices):
        MATCH = "match", _("match")
        MISMATCH = "mismatch", _("MISMATCH")
        MISSING = "missing", _("listed, not received")
        UNLISTED = "unlisted", _("received, not listed")

    batch = models.ForeignKey(IntakeBatch, models.PROTECT, related_name="manifest_entries")
    path = models.TextField()
    algorithm = models.CharField(max_length=8)
    expected = models.CharField(max_length=64, blank=True)
    actual = models.CharField(max_length=64, blank=True)
    result = models.CharField(max_length=16, choices=Result.choices)
    item = models.ForeignKey(EvidenceItem, models.PROTECT, null=True, blank=True, related_name="+")

    def __str__(self) -> str:
        return f"{self.path}: {self.result}"


class FixityCheck(models.Model):
    case = models.ForeignKey("casefiles.Case", models.PROTECT, null=True, blank=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    files_checked = models.IntegerField(default=0)
    items_checked = models.IntegerField(default=0)
    ok = models.IntegerField(default=0)
    changed = models.JSONField(default=list, blank=True)  # sha256 of files whose bytes changed
    missing = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"fixity {self.started_at:%Y-%m-%d %H:%M}"


class Identification(models.Model):
    """A witness identifies a person in an item (a mother recognises her son in a photo)."""

    class Confidence(models.TextChoices):
        CERTAIN = "certain", _("Certain")
        PROBABLE = "probable", _("Probable")
        POSSIBLE = "possible", _("Possible")

    class Method(models.TextChoices):
        PHOTO = "photo", _("Shown the photo")
        VIDEO = "video", _("Shown the video")
        FEATURES = "features", _("Distinctive marks or clothing")
        DOCUMENT = "document", _("A document in the item")
        OTHER = "other", _("Other")

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    item = models.ForeignKey(EvidenceItem, models.PROTECT, related_name="identifications")
    witness = models.ForeignKey(
        "people.Person", models.PROTECT, related_name="identifications_made"
    )
    identified = models.ForeignKey("people.Person", models.PROTECT, related_name="identified_in")
    confidence = models.CharField(_("confidence"), max_length=16, choices=Confidence.choices)
    method = models.CharField(_("method"), max_length=16, choices=Method.choices)
    identified_on = models.DateField(_("when"))
    notes = models.TextField(_("notes"), blank=True)
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    recorded_at = models.DateTimeField(auto_now_add=True)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        ordering = ["identified_on", "pk"]
        verbose_name = _("identification")

    def __str__(self) -> str:
        return f"{self.witness} identifies {self.identified} in {self.item}"


class NearHash(models.Model):
    """One distinct perceptual hash of a case's images, in the index of hash bands that
    near-duplicate grouping looks new images up in (items with the same hash share the
    row). ``b0``..``b4`` are its five bands: two hashes within NEAR_DISTANCE bits agree on
    at least one. ``group``: the near-duplicate group it belongs to, named by the
    smallest item of the group (``EvidenceItem.near_group`` once the group has two
    items or more)."""

    case = models.ForeignKey("casefiles.Case", models.PROTECT, related_name="+")
    phash = models.BigIntegerField()
    group = models.BigIntegerField()
    b0 = models.IntegerField()
    b1 = models.IntegerField()
    b2 = models.IntegerField()
    b3 = models.IntegerField()
    b4 = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["case", "phash"], name="near_hash_once_per_case")
        ]
        indexes = [
            models.Index(fields=["case", "group"], name="near_hash_group"),
            *(models.Index(fields=["case", f"b{k}"], name=f"near_hash_band{k}") for k in range(5)),
        ]

    def __str__(self) -> str:
        return f"{self.phash:#x} in group {self.group}"


class NearIndex(models.Model):
    """How far a case's near-duplicate grouping has come: every item up to ``through``
    (by primary key) is in the index. Its row is the grouping's lock: one grouping of a
    case at a time, without holding up intakes."""

    case = models.OneToOneField("casefiles.Case", models.PROTECT, primary_key=True)
    through = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"near-duplicate index of case {self.case_id}: through item {self.through}"
