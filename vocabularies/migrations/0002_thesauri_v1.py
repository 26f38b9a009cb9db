"""The vocabularies, version 1 (vocabularies/thesauri/v1.json): seven HURIDOCS
micro-thesauri (violation types, act types, methods of violence and torture, types of
detention, perpetrator types, degrees of involvement, source types) and the Syrian
Archive's violation categories, each term in English and Arabic with its broader term.
The file is never edited: a later version comes as its own file and migration, adding
and retiring."""

import json
from pathlib import Path

from django.db import migrations

VERSION_FILE = Path(__file__).resolve().parent.parent / "thesauri" / "v1.json"


def load(apps, schema_editor):
    Term = apps.get_model("vocabularies", "Term")
    thesauri = json.loads(VERSION_FILE.read_text(encoding="utf-8"))
    version = thesauri["version"]
    for scheme in thesauri["schemes"]:
        made = {}
        for order, (code, parent, english, arabic) in enumerate(scheme["terms"], start=1):
            above = made[parent] if parent is not None else None
            made[code], _ = Term.objects.update_or_create(
                scheme=scheme["scheme"],
                code=code,
                defaults={
                    "label_en": english,
                    "label_ar": arabic,
                    "parent": above,
                    "depth": 0 if above is None else above.depth + 1,
                    "order": order,
                    "since": version,
                },
            )


def unload(apps, schema_editor):
    """Back out only the terms nothing refers to (a record keeps its term for good):
    the deepest first, so a broader term goes once its narrower ones have."""
    from django.db.models import ProtectedError

    Term = apps.get_model("vocabularies", "Term")
    for term in Term.objects.filter(since="1").order_by("-depth", "-pk"):
        try:
            term.delete()
        except ProtectedError:
            continue


class Migration(migrations.Migration):
    dependencies = [("vocabularies", "0001_terms")]

    operations = [migrations.RunPython(load, unload)]
