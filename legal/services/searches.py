"""Saved searches of the review workspace: a filter kept under a name, its owner's alone
or shared with the members of its case. Saving and deleting one are audited."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, can
from casefiles.models import Case

from ..models import SavedSearch

if TYPE_CHECKING:
    from django.contrib.auth.models import User as Account


def save_search(
    *, actor: Account, case: Case, name: str, query: str, shared: bool = False
) -> SavedSearch:
    """Keep the workspace filter ``query`` (as ``WorkspaceFilter.query`` normalised it)."""
    if not can(actor, Action.VIEW_CASE, case):
        raise PermissionDenied(_("Only members of this case keep searches in it."))
    name = name.strip()
    if not name or "\x00" in name or "\x00" in query:
        raise ValidationError({"name": _("Give the search a name.")})
    search = SavedSearch(case=case, owner=actor, name=name, query=query, shared=shared)
    search.full_clean()
    with transaction.atomic(durable=True):
        search.save()
        audit.record(
            actor,
            "legal.search_save",
            target=search,
            case=case,
            name=name,
            query=query,
            shared=shared,
        )
    return search


def delete_search(*, actor: Account, search: SavedSearch) -> None:
    """Its owner deletes a saved search (shared or not); nobody else does."""
    if search.owner_id != actor.pk:
        raise PermissionDenied(_("Only who saved a search deletes it."))
    with transaction.atomic(durable=True):
        audit.record(
            actor,
            "legal.search_delete",
            target=search,
            case=search.case,
            name=search.name,
            query=search.query,
            shared=search.shared,
        )
        search.delete()
