from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from .querysets import (
    AccessRequestQuerySet,
    AuditEntryQuerySet,
    CaseQuerySet,
    MembershipQuerySet,
)
from .roles import Role

reference_validator = RegexValidator(
    r"^[A-Z0-9][A-Z0-9-]{2,31}$",
    _("Use 3 to 32 capital letters, digits and hyphens, e.g. SYR-2014-001."),
)


class Case(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        REVIEW = "review", _("In review")
        CLOSED = "closed", _("Closed")
        ARCHIVED = "archived", _("Archived")

    class Sensitivity(models.TextChoices):
        INTERNAL = "internal", _("Internal")
        CONFIDENTIAL = "confidential", _("Confidential")
        STRICT = "strict", _("Strictly confidential")

    reference = models.CharField(
        _("reference"), max_length=32, unique=True, validators=[reference_validator]
    )
    title = models.CharField(_("title"), max_length=200)
    summary = models.TextField(_("summary"), blank=True)
    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.OPEN
    )
    sensitivity = models.CharField(
        _("sensitivity"),
        max_length=16,
        choices=Sensitivity.choices,
        default=Sensitivity.CONFIDENTIAL,
    )
    jurisdiction = models.CharField(_("jurisdiction"), max_length=100, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    objects = CaseQuerySet.as_manager()

    class Meta:
        ordering = ["reference"]
        verbose_name = _("case")
        verbose_name_plural = _("cases")

    def __str__(self) -> str:
        return self.reference

    def get_absolute_url(self) -> str:
        return reverse("casefiles:case_detail", args=[self.reference])


class Membership(models.Model):
    """A user's role in a case. Revoked and expired memberships stay as history."""

    Role = Role

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, related_name="case_memberships"
    )
    case = models.ForeignKey(Case, models.PROTECT, related_name="memberships")
    role = models.CharField(_("role"), max_length=16, choices=Role.choices)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    granted_at = models.DateTimeField(_("granted at"), auto_now_add=True)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )

    objects = MembershipQuerySet.as_manager()

    class Meta:
        ordering = ["case", "user"]
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "case"],
                condition=models.Q(revoked_at__isnull=True),
                name="one_unrevoked_membership_per_user_and_case",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.case} · {self.get_role_display()}"


class AuditEntry(models.Model):
    """One link of the tamper-evident audit chain. Written only by ``audit.record``.

    ``hash = SHA-256(prev_hash || canonical JSON of the entry)``; see docs/audit-log.md.
    """

    seq = models.BigIntegerField(primary_key=True)
    at = models.DateTimeField(db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    actor_label = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=64, db_index=True)
    target_type = models.CharField(max_length=100, blank=True)
    target_id = models.CharField(max_length=64, blank=True)
    target_label = models.CharField(max_length=200, blank=True)
    case = models.ForeignKey(
        Case, models.PROTECT, null=True, blank=True, related_name="audit_entries"
    )
    details = models.JSONField(default=dict, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True)
    prev_hash = models.CharField(max_length=64, unique=True)
    hash = models.CharField(max_length=64, unique=True)

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        ordering = ["seq"]
        verbose_name = _("audit entry")
        verbose_name_plural = _("audit entries")
        indexes = [
            models.Index(fields=["case", "seq"], name="audit_case_seq"),
            models.Index(fields=["actor", "seq"], name="audit_actor_seq"),
            models.Index(fields=["action", "seq"], name="audit_action_seq"),
            models.Index(fields=["target_type", "target_id"], name="audit_target"),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action}"

    # Set by casefiles.audit.record() (and the migrations' binding) on the entry it saves.
    _via_record: bool = False

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise TypeError("Audit entries are append-only: they cannot be changed.")
        if not self._via_record:
            raise TypeError("Audit entries are written only through casefiles.audit.record().")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError("Audit entries are append-only: they cannot be deleted.")


class AccessRequest(models.Model):
    """A user asks to join a case; a lead of the case or a system admin decides."""

    # Not stored: set on the request in hand when its approval waits for a second admin.
    pending_grant: "GrantRequest | None" = None

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        APPROVED = "approved", _("Approved")
        REFUSED = "refused", _("Refused")
        WITHDRAWN = "withdrawn", _("Withdrawn")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, related_name="access_requests"
    )
    case = models.ForeignKey(Case, models.PROTECT, related_name="access_requests")
    reason = models.TextField(_("reason"))
    requested_at = models.DateTimeField(_("requested at"), auto_now_add=True)
    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.PENDING
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(_("decided at"), null=True, blank=True)
    decision_note = models.TextField(_("note"), blank=True)
    membership = models.ForeignKey(
        Membership, models.PROTECT, null=True, blank=True, related_name="+"
    )

    objects = AccessRequestQuerySet.as_manager()

    class Meta:
        ordering = ["-requested_at"]
        verbose_name = _("access request")
        verbose_name_plural = _("access requests")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "case"],
                condition=models.Q(status="pending"),
                name="one_pending_request_per_user_and_case",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.case}"


class AuditCheckpoint(models.Model):
    """A signed Merkle root over audit entries 1..size; see docs/audit-checkpoints.md."""

    size = models.BigIntegerField(unique=True)
    root = models.CharField(max_length=64)
    origin = models.CharField(max_length=200)
    signed_text = models.TextField()
    signature = models.CharField(max_length=128)
    public_key = models.TextField()
    # RFC 3161 TimeStampResp (DER, base64) for the signed text, when a TSA is configured.
    timestamp_reply = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-size"]
        verbose_name = _("audit checkpoint")
        verbose_name_plural = _("audit checkpoints")

    def __str__(self) -> str:
        return f"{self.origin} #{self.size}"


class SigningKey(models.Model):
    """An Ed25519 key the organisation has signed checkpoints and packages with: listed
    (``/keys/``, ``/.well-known/athar-signing-keys``, ``manage.py signing_key show``) so
    that a verifier can trust a key it got from us, not the copy inside a package. A
    key is registered when it first signs; when ``ATHAR_CHECKPOINT_KEY`` changes, the
    new key is registered and the old one retired, keeping its dates. At most one key
    is current (not retired). See docs/audit-checkpoints.md."""

    public_key = models.TextField()  # SubjectPublicKeyInfo PEM
    # checkpoints.fingerprint(): SHA-256 (hex) of the DER SubjectPublicKeyInfo.
    fingerprint = models.CharField(max_length=64, unique=True)
    first_used_at = models.DateTimeField()
    last_used_at = models.DateTimeField()
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-first_used_at", "-pk"]
        verbose_name = _("signing key")
        verbose_name_plural = _("signing keys")

    def __str__(self) -> str:
        return self.fingerprint

    @property
    def is_current(self) -> bool:
        return self.retired_at is None


class Cosignature(models.Model):
    """A witness's cosignature of a checkpoint (C2SP tlog-cosignature, see
    ``casefiles.cosignatures``): verified against the witness's known key
    (``ATHAR_WITNESS_KEYS``) before it is stored, and published with the checkpoint."""

    checkpoint = models.ForeignKey(
        AuditCheckpoint, on_delete=models.PROTECT, related_name="cosignatures"
    )
    witness = models.CharField(max_length=200)
    # checkpoints.fingerprint() of the witness's public key.
    key_fingerprint = models.CharField(max_length=64)
    time = models.BigIntegerField()  # POSIX seconds, as signed
    line = models.TextField()  # the signature line, exactly as the witness gave it
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["checkpoint", "witness"]
        constraints = [
            models.UniqueConstraint(
                fields=["checkpoint", "key_fingerprint"], name="one_cosignature_per_witness_key"
            )
        ]
        verbose_name = _("cosignature")
        verbose_name_plural = _("cosignatures")

    def __str__(self) -> str:
        return f"{self.witness} · {self.checkpoint}"


class GrantRequest(models.Model):
    """A grant or change of case access that needs a second admin's approval.

    An admin who created an account or issued its enrolment code may hold its password
    and its second factor: giving that account access would let the admin reach the case
    alone, as the account. And lead or investigator (who may reveal identities) granted by
    an admin who is not the case's lead is a reach into the case too. Either waits here
    for another admin (``services.decide_grant``); with no other admin to ask, the grant
    is made at once and its entry says so, as for second-factor resets.
    """

    class Outcome(models.TextChoices):
        PENDING = "pending", _("Waiting for another admin")
        APPROVED = "approved", _("Approved")
        REFUSED = "refused", _("Refused")
        CANCELLED = "cancelled", _("Withdrawn")

    class Why(models.TextChoices):
        OWN_ACCOUNT = "own_account", _("The admin who asks created this account or enrolled it")
        HELD_BY_OTHER = (
            "held_by_other",
            _("Held by another admin, who created, enrolled or recovered this account"),
        )
        NOT_LEAD = "not_lead", _("Lead or investigator, asked by an admin who is not the lead")

    case = models.ForeignKey(Case, models.PROTECT, related_name="grant_requests")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    role = models.CharField(_("role"), max_length=16, choices=Role.choices)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    # Set when the request changes a membership in force rather than granting a new one.
    membership = models.ForeignKey(
        Membership, models.PROTECT, null=True, blank=True, related_name="+"
    )
    # Set when the request approves a user's own access request.
    access_request = models.ForeignKey(
        AccessRequest, models.PROTECT, null=True, blank=True, related_name="+"
    )
    why = models.JSONField(default=list)
    note = models.TextField(_("note"), blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    granted = models.ForeignKey(Membership, models.PROTECT, null=True, blank=True, related_name="+")

    class Meta:
        ordering = ["-requested_at"]
        verbose_name = _("grant waiting for a second admin")
        verbose_name_plural = _("grants waiting for a second admin")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "case"],
                condition=models.Q(outcome="pending"),
                name="one_pending_grant_per_user_and_case",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.case} · {self.role} · {self.outcome}"

    def why_labels(self) -> list[str]:
        return [str(self.Why(w).label) for w in self.why if w in self.Why.values]


class Submission(models.Model):
    """A create form's one-time token, spent by the write it made (``casefiles/once.py``).

    Written in the write's own transaction (by the first audit entry it appends), so a
    token is spent exactly when its record exists; ``result_url`` is the page that POST
    went to, where a repeat of it is sent back. Rows older than a day may be pruned.
    """

    account = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="+")
    token = models.CharField(max_length=32, unique=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # The write's first audit entry: what spent the token.
    entry = models.ForeignKey(AuditEntry, models.SET_NULL, null=True, blank=True, related_name="+")
    result_url = models.CharField(max_length=500, blank=True)

    class Meta:
        verbose_name = _("form submission")
        verbose_name_plural = _("form submissions")

    def __str__(self) -> str:
        return f"{self.account} · {self.created_at:%Y-%m-%d %H:%M}"
