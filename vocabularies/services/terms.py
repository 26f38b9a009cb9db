"""The vocabularies' terms: system admins add, relabel and retire them, never delete one
(records name a term for good)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import is_system_admin

from ..models import Term

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account

LOCAL_VERSION = "local"  # added here, not by a vocabulary version's migration


def _require_admin(actor: Account) -> None:
    if not is_system_admin(actor):
        raise PermissionDenied(_("Only a system admin changes the vocabularies."))


def add_term(
    *,
    actor: Account,
    scheme: str,
    code: str,
    label_en: str,
    label_ar: str,
    parent: Term | None = None,
) -> Term:
    _require_admin(actor)
    if parent is not None and parent.retired_at is not None:
        raise ValidationError({"parent": _("This term is retired: add under a current one.")})
    term = Term(
        scheme=scheme,
        code=code.strip(),
        label_en=label_en.strip(),
        label_ar=label_ar.strip(),
        parent=parent,
        depth=0 if parent is None else parent.depth + 1,
        order=(parent.order if parent is not None else 0),
        since=LOCAL_VERSION,
    )
    term.full_clean()
    with transaction.atomic(durable=True):
        term.save()
        audit.record(
            actor,
            "vocabulary.term_add",
            target=term,
            scheme=scheme,
            code=term.code,
            label_en=term.label_en,
            label_ar=term.label_ar,
            parent=parent.code if parent is not None else None,
        )
    return term


def relabel_term(*, actor: Account, term: Term, label_en: str, label_ar: str) -> Term:
    """New labels for a term (its code, scheme and place stay): the old ones are in the
    audit entry."""
    _require_admin(actor)
    with transaction.atomic(durable=True):
        stored = Term.objects.select_for_update().get(pk=term.pk)
        before = {"label_en": stored.label_en, "label_ar": stored.label_ar}
        stored.label_en, stored.label_ar = label_en.strip(), label_ar.strip()
        stored.full_clean()
        after = {"label_en": stored.label_en, "label_ar": stored.label_ar}
        if after != before:
            stored.save(update_fields=["label_en", "label_ar"])
            audit.record(
                actor,
                "vocabulary.term_relabel",
                target=stored,
                scheme=stored.scheme,
                code=stored.code,
                before=before,
                after=after,
            )
    return stored


def retire_terms(*, actor: Account, terms: QuerySet[Term]) -> list[str]:
    """Retire these terms now: no new record may take them; the records that hold them
    keep them. Returns the scheme:code of each term retired."""
    _require_admin(actor)
    with transaction.atomic(durable=True):
        current = list(terms.select_for_update(of=("self",)).filter(retired_at__isnull=True))
        codes = sorted(f"{t.scheme}:{t.code}" for t in current)
        if codes:
            Term.objects.filter(pk__in=[t.pk for t in current]).update(retired_at=timezone.now())
            audit.record(actor, "vocabulary.term_retire", codes=codes)
    return codes
