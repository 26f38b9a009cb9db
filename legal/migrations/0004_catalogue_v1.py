"""The catalogue of crimes and their elements, version 1 (legal/elements/v1.json): the
Rome Statute's crimes against humanity of murder, imprisonment, torture, enforced
disappearance and other inhumane acts with article 7's context; article 8's wilful
killing and torture; Germany's VStGB § 7 (the Koblenz trial's law). The file is never
edited: a later version comes as its own file and migration, adding and retiring."""

import json
from pathlib import Path

from django.db import migrations

VERSION_FILE = Path(__file__).resolve().parent.parent / "elements" / "v1.json"


def element_code(crime_code: str, n: int) -> str:
    return f"{crime_code}.{n}"


def load(apps, schema_editor):
    Crime = apps.get_model("legal", "Crime")
    LegalElement = apps.get_model("legal", "LegalElement")
    catalogue = json.loads(VERSION_FILE.read_text(encoding="utf-8"))
    version = catalogue["version"]
    for order, entry in enumerate(catalogue["crimes"], start=1):
        crime, _ = Crime.objects.update_or_create(
            code=entry["code"],
            defaults={
                "instrument": entry["instrument"],
                "jurisdiction": entry["jurisdiction"],
                "article": entry["article"],
                "label_en": entry["en"],
                "label_ar": entry["ar"],
                "contextual": entry.get("contextual", False),
                "order": order * 10,
                "since": version,
            },
        )
        for n, (english, arabic) in enumerate(entry["elements"], start=1):
            LegalElement.objects.update_or_create(
                code=element_code(entry["code"], n),
                defaults={
                    "crime": crime,
                    "label_en": english,
                    "label_ar": arabic,
                    "order": n,
                    "since": version,
                },
            )


def unload(apps, schema_editor):
    """Back out only what no link names (a link keeps its element for good)."""
    LegalElement = apps.get_model("legal", "LegalElement")
    Crime = apps.get_model("legal", "Crime")
    LegalElement.objects.filter(since="1", links__isnull=True).delete()
    Crime.objects.filter(since="1", elements__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("legal", "0003_elements_links_assessments")]

    operations = [migrations.RunPython(load, unload)]
