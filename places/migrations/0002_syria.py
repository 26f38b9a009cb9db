"""The gazetteer, version 1 (places/gazetteer/syria.json): Syria, its 14 governorates
(ISO 3166-2 codes, with the names GeoNames gives them) and the detention and hospital
facilities named in public reporting on the Caesar photographs. The file is never
edited: a later version comes as its own file and migration."""

import json
from decimal import Decimal
from pathlib import Path

from django.db import migrations

from search.normalise import normalise

VERSION_FILE = Path(__file__).resolve().parent.parent / "gazetteer" / "syria.json"


def _searchable(*names):
    # places.models.searchable, as it was when this migration was written.
    return "|" + "|".join(normalise(n) for n in names if n.strip()) + "|"


def _position(value):
    return None if value is None else Decimal(str(value))


def load(apps, schema_editor):
    Place = apps.get_model("places", "Place")
    gazetteer = json.loads(VERSION_FILE.read_text(encoding="utf-8"))
    made = {}
    for entry in gazetteer["places"]:
        alt = entry.get("alt", [])
        made[entry["code"]], _ = Place.objects.update_or_create(
            code=entry["code"],
            defaults={
                "kind": entry["kind"],
                "facility_type": entry.get("facility", ""),
                "parent": made[entry["parent"]] if entry["parent"] else None,
                "name_en": entry["en"],
                "name_ar": entry["ar"],
                "alt_names": alt,
                "latitude": _position(entry.get("lat")),
                "longitude": _position(entry.get("lon")),
                "geonames_admin1": entry.get("geonames", ""),
                "search_text": _searchable(entry["en"], entry["ar"], *alt),
                "since": gazetteer["version"],
            },
        )


def unload(apps, schema_editor):
    """Back out the places nothing refers to, the smallest first."""
    from django.db.models import ProtectedError

    Place = apps.get_model("places", "Place")
    for kind in ("facility", "town", "district", "governorate", "country"):
        for place in Place.objects.filter(since="1", kind=kind):
            try:
                place.delete()
            except ProtectedError:
                continue


class Migration(migrations.Migration):
    dependencies = [("places", "0001_gazetteer")]

    operations = [migrations.RunPython(load, unload)]
