"""Whole-word matches on ``Entry.words`` and their rank, on either database.

PostgreSQL: ``vector @@ plainto_tsquery('simple', terms)``, where ``vector`` is the
column PostgreSQL generates from ``words`` (``to_tsvector('simple', words)``, migration
0002, with its GIN index), ranked by ``ts_rank(vector, ...)``. The model does not hold
that column (SQLite has no tsvector): the SQL here names it beside ``words``, in the
same table alias. SQLite: each term found between spaces in `` words `` (the words are
normalised and single-spaced, so a term is a whole word there exactly when PostgreSQL's
vector holds it).
"""

from __future__ import annotations

from typing import Any

from django.db.models import F, FloatField, Func, Lookup, TextField, Value
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
            sql = f"{vector_of(lhs)} @@ plainto_tsquery('simple'::regconfig, %s)"
            return sql, [*lhs_params, " ".join(terms)]
        parts = [f"instr(' ' || {lhs} || ' ', %s) > 0" for _ in terms]
        params: list[Any] = []
        for term in terms:
            params += [*lhs_params, f" {term} "]
        return "(" + " AND ".join(parts) + ")", params


WORDS_COLUMN = '"words"'


def vector_of(words_sql: str) -> str:
    """The generated ``vector`` column beside the ``words`` column this SQL names."""
    if not words_sql.endswith(WORDS_COLUMN):
        raise ValueError(f"not the words column: {words_sql}")
    return words_sql[: -len(WORDS_COLUMN)] + '"vector"'


class Rank(Func):
    """``ts_rank(vector, plainto_tsquery('simple', terms))`` of the entry's vector."""

    output_field = FloatField()

    def __init__(self, terms: list[str]) -> None:
        super().__init__(F("words"), Value(" ".join(terms)))

    def as_sql(
        self,
        compiler: Any,
        connection: Any,
        function: str | None = None,
        template: str | None = None,
        arg_joiner: str | None = None,
        **extra_context: Any,
    ) -> Any:
        words, words_params = compiler.compile(self.source_expressions[0])
        terms, terms_params = compiler.compile(self.source_expressions[1])
        sql = f"ts_rank({vector_of(words)}, plainto_tsquery('simple'::regconfig, {terms}))"
        return sql, (*words_params, *terms_params)


def rank(terms: list[str], vendor: str) -> Expression:
    """How well an entry's words answer ``terms`` (PostgreSQL's ``ts_rank``; SQLite: 0,
    and results come newest first)."""
    if vendor != "postgresql" or not terms:
        return Value(0.0, output_field=FloatField())
    return Rank(terms)
