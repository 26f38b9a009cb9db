"""Whole-word matches on ``Entry.words`` and their rank, on either database.

PostgreSQL: ``to_tsvector('simple', words) @@ plainto_tsquery('simple', terms)``, the
expression of the GIN index of migration 0002, ranked by ``ts_rank``. SQLite: each term
found between spaces in `` words `` (the words are normalised and single-spaced, so a
term is a whole word there exactly when PostgreSQL's vector holds it).
"""

from __future__ import annotations

from typing import Any

from django.db.models import FloatField, Func, Lookup, TextField, Value
from django.db.models.expressions import Expression


class WordsField(TextField):  # type: ignore[type-arg]  # as Django's own fields
    """Normalised words, one space between them."""


@WordsField.register_lookup
class HasWords(Lookup):
    """``words__has_words=["term", ...]``: every term is one of the words."""

    lookup_name = "has_words"
    prepare_rhs = False

    def get_db_prep_lookup(self, value: Any, connection: Any) -> Any:
        return "%s", [value]

    def as_sql(self, compiler: Any, connection: Any) -> Any:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        terms = [str(t) for t in self.rhs]
        if not terms:
            return "1 = 0", []
        if connection.vendor == "postgresql":
            sql = (
                f"to_tsvector('simple'::regconfig, {lhs}) @@ "
                "plainto_tsquery('simple'::regconfig, %s)"
            )
            return sql, [*lhs_params, " ".join(terms)]
        parts = [f"instr(' ' || {lhs} || ' ', %s) > 0" for _ in terms]
        params: list[Any] = []
        for term in terms:
            params += [*lhs_params, f" {term} "]
        return "(" + " AND ".join(parts) + ")", params


def rank(terms: list[str], vendor: str) -> Expression:
    """How well an entry's words answer ``terms`` (PostgreSQL's ``ts_rank``; SQLite: 0,
    and results come newest first)."""
    if vendor != "postgresql" or not terms:
        return Value(0.0, output_field=FloatField())
    vector = Func(
        Value("simple"), "words", function="to_tsvector", template="%(function)s(%(expressions)s)"
    )
    query = Func(Value("simple"), Value(" ".join(terms)), function="plainto_tsquery")
    return Func(vector, query, function="ts_rank", output_field=FloatField())
