"""The reads of the gazetteer: what pages and the API call, never a manager. Places are
reference data, not case content: any signed-in user reads them."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from .models import Place


def places() -> QuerySet:
    """Every place, with what it sits within."""
    return Place.objects.select_related("parent")


def get_place(code: str) -> Place:
    """The place ``code`` with the (at most four) places above it, in one query; 404."""
    return get_object_or_404(
        Place.objects.select_related("parent__parent__parent__parent"), code=code
    )
