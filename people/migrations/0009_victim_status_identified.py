"""A victim's one status (decision 0021): the person's, with "identified" added (the
values the missing app's profile status had)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("people", "0008_name_parts"),
    ]

    operations = [
        migrations.AlterField(
            model_name="person",
            name="victim_status",
            field=models.CharField(
                blank=True,
                choices=[
                    ("missing", "Missing"),
                    ("detained", "Detained"),
                    ("deceased", "Deceased"),
                    ("identified", "Identified"),
                    ("released", "Released"),
                ],
                max_length=16,
                verbose_name="victim status",
            ),
        ),
    ]
