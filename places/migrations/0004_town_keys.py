"""The keys of each town's names (``PlaceKey``): how a photo's nearest GeoNames town is
matched to the towns of the gazetteer and so to their districts. The towns already
recorded get theirs here; later ones on save."""

import re

import django.db.models.deletion
from django.db import migrations, models

from search.normalise import normalise

_NOT_A_LETTER = re.compile(r"[^\w ]+")


def _town_key(name):
    # places.models.town_key, as it was when this migration was written.
    return " ".join(_NOT_A_LETTER.sub("", normalise(name)).split())


def write_keys(apps, schema_editor):
    Place = apps.get_model("places", "Place")
    PlaceKey = apps.get_model("places", "PlaceKey")
    rows = []
    for town in Place.objects.filter(kind="town").order_by("pk"):
        names = [town.name_en, town.name_ar, *town.alt_names]
        keys = {key[:200] for key in map(_town_key, names) if key}
        rows += [PlaceKey(place=town, key=key) for key in sorted(keys)]
    PlaceKey.objects.bulk_create(rows)


class Migration(migrations.Migration):
    dependencies = [("places", "0003_item_locations")]

    operations = [
        migrations.CreateModel(
            name="PlaceKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=200)),
                (
                    "place",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="places.place",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("key", "place"), name="place_key_unique")
                ],
            },
        ),
        migrations.RunPython(write_keys, migrations.RunPython.noop),
    ]
