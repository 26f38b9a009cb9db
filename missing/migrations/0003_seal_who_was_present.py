"""Who was present at a family identification is sealed like the antemortem profile: the
plain ``present`` becomes ``enc_present``, each value encrypted under the current field key
and bound to its row and column (``people.crypto``). The reverse opens them again."""

from django.db import migrations, models

from people import crypto


def _aad(candidate) -> bytes:
    return crypto.associated_data(candidate._meta.db_table, candidate.pk, "enc_present")


def seal(apps, schema_editor):
    Candidate = apps.get_model("missing", "Candidate")
    rows = Candidate.objects.exclude(present="").only("pk", "present").order_by("pk")
    for candidate in rows.iterator(chunk_size=500):
        candidate.enc_present = crypto.encrypt(candidate.present, _aad(candidate))
        candidate.save(update_fields=["enc_present"])


def unseal(apps, schema_editor):
    Candidate = apps.get_model("missing", "Candidate")
    rows = Candidate.objects.exclude(enc_present="").only("pk", "enc_present").order_by("pk")
    for candidate in rows.iterator(chunk_size=500):
        candidate.present = crypto.decrypt(candidate.enc_present, _aad(candidate))[:500]
        candidate.save(update_fields=["present"])


class Migration(migrations.Migration):
    dependencies = [("missing", "0002_statuschange_append_only")]

    operations = [
        migrations.AddField(
            model_name="candidate",
            name="enc_present",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(seal, unseal),
        migrations.RemoveField(model_name="candidate", name="present"),
    ]
