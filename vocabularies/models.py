"""Controlled vocabularies: the terms records are described with (decision 0017).

A term belongs to one scheme (a HURIDOCS micro-thesaurus, the Syrian Archive's violation
categories), has a code that never changes within it, a label in English and in Arabic,
and may sit under a parent term of its scheme. Terms are retired, never deleted: a record
keeps the term it was made with (records refer to terms with ``on_delete=PROTECT``), and
a retired term is no longer offered for new records (``TermQuerySet.offered``).
"""

from __future__ import annotations

from typing import Self

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _


class Scheme(models.TextChoices):
    VIOLATION_TYPE = "violation_type", _("Violation types")
    ACT_TYPE = "act_type", _("Act types")
    METHOD = "method", _("Methods of violence and torture")
    DETENTION_TYPE = "detention_type", _("Types of detention")
    PERPETRATOR_TYPE = "perpetrator_type", _("Perpetrator types")
    INVOLVEMENT = "involvement", _("Degrees of involvement")
    SOURCE_TYPE = "source_type", _("Source types")
    SA_VIOLATION = "sa_violation", _("Syrian Archive violation categories")


class TermQuerySet(models.QuerySet):
    def offered(self, scheme: str, keep: Term | int | None = None) -> Self:
        """The terms a form offers for ``scheme``: the current ones, and the term the record
        already holds (``keep``), retired or not, so that editing it does not drop it."""
        kept = keep.pk if isinstance(keep, Term) else keep
        held = Q(pk=kept) if kept is not None else Q(pk__in=[])
        return self.filter(Q(retired_at__isnull=True) | held, scheme=scheme)


class Term(models.Model):
    scheme = models.CharField(_("scheme"), max_length=32, choices=Scheme.choices)
    code = models.CharField(_("code"), max_length=32)
    label_en = models.CharField(_("label in English"), max_length=300)
    label_ar = models.CharField(_("label in Arabic"), max_length=300, blank=True)
    parent = models.ForeignKey(
        "self",
        models.PROTECT,
        null=True,
        blank=True,
        related_name="children",
        verbose_name=_("broader term"),
    )
    depth = models.PositiveSmallIntegerField(default=0)
    order = models.PositiveIntegerField(default=0)
    since = models.CharField(_("vocabulary version"), max_length=16)
    retired_at = models.DateTimeField(_("retired"), null=True, blank=True)

    objects = TermQuerySet.as_manager()

    class Meta:
        ordering = ["scheme", "order", "code"]
        verbose_name = _("vocabulary term")
        verbose_name_plural = _("vocabulary terms")
        constraints = [
            models.UniqueConstraint(fields=["scheme", "code"], name="term_code_unique_in_scheme")
        ]
        indexes = [models.Index(fields=["scheme", "order", "code"], name="term_scheme_order")]

    def __str__(self) -> str:
        return self.label(get_language())

    def label(self, language: str | None) -> str:
        """The label in ``language``; the English one where a term has no Arabic yet."""
        if (language or "").startswith("ar") and self.label_ar:
            return self.label_ar
        return self.label_en

    def clean(self) -> None:
        if self.parent is not None and self.parent.scheme != self.scheme:
            raise ValidationError({"parent": _("A broader term must be of the same scheme.")})
