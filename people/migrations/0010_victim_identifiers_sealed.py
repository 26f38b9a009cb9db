"""A victim's detainee number and detention branch leave the person (decision 0023): the
missing app's 0006 sealed them in the antemortem profile and emptied these columns."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("people", "0009_victim_status_identified"),
        ("missing", "0007_victim_identifiers_sealed"),
    ]

    operations = [
        migrations.RemoveField(model_name="person", name="detainee_number"),
        migrations.RemoveField(model_name="person", name="detention_branch"),
    ]
