"""The index of people held a victim's detainee number and detention branch in plain text
(their entry's snippet and short fields). Both are sealed in the antemortem profile now
(decision 0023): each person's entry is written again from what stays in the clear, as
``search.declared`` indexes people (code and roles, the place last seen)."""

from django.db import migrations

from search.normalise import normalise
from search.text import words


def rewrite(apps, schema_editor):
    Entry = apps.get_model("search", "Entry")
    Person = apps.get_model("people", "Person")
    entries = Entry.objects.filter(kind="person").order_by("pk")
    for entry in entries.iterator(chunk_size=500):
        person = Person.objects.filter(pk=entry.key).only("last_seen_place").first()
        entry.body = person.last_seen_place if person is not None else ""
        entry.words = " ".join(words(f"{entry.reference}\n{entry.title}\n{entry.body}\n"))
        entry.short = normalise(entry.reference)
        entry.save(update_fields=["body", "words", "short"])


class Migration(migrations.Migration):
    dependencies = [
        ("search", "0002_index"),
        ("people", "0010_victim_identifiers_sealed"),
    ]

    operations = [migrations.RunPython(rewrite, migrations.RunPython.noop)]
