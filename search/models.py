"""The search index: one row per indexed record and case, and the blind index of names.

``Entry.words`` holds the record's text normalised (``search.normalise``) and cut into
words, one space between them: PostgreSQL keeps a ``tsvector`` of it (``simple``
configuration, a generated column with a GIN index, migration 0002), SQLite matches
whole words in it. ``Entry.short`` holds the short fields normalised (references, file
names, codes, cameras, places): PostgreSQL has a ``pg_trgm`` GIN index on it for
matches inside a word. ``title`` and ``body`` are the text as written, for the result's
title and its highlighted snippet.
"""

from __future__ import annotations

from django.db import models

from casefiles.querysets import CaseScopedQuerySet

from .lookups import WordsField


class Entry(models.Model):
    case = models.ForeignKey("casefiles.Case", models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32)
    key = models.CharField(max_length=64)  # the record's primary key, as text
    reference = models.CharField(max_length=64)  # EV-000123, T-0004, W-0017 ...
    title = models.CharField(max_length=300, blank=True)
    body = models.TextField(blank=True)
    words = WordsField(blank=True)
    short = models.TextField(blank=True)
    # The testimony whose statement decides whether a reader may see this record
    # (``people.protection.withheld_testimonies``): itself, an item's, a link's.
    guard = models.BigIntegerField(null=True, blank=True)
    at = models.DateTimeField(null=True, blank=True)

    objects = CaseScopedQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "key", "case"], name="one_entry_per_record")
        ]
        indexes = [models.Index(fields=["case", "kind", "guard"], name="search_entry_case_kind")]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference}"


class NameKey(models.Model):
    """A keyed digest (HMAC) of one key of one of a person's names: a normalised Arabic
    word or a Latin name key (``search.names``). Never the name itself."""

    person = models.ForeignKey("people.Person", models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["digest", "person"], name="one_name_key_per_person")
        ]

    def __str__(self) -> str:
        return f"{self.person_id} · {self.digest[:8]}"
