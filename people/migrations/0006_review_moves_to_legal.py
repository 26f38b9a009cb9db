"""Review moves to legal: the statuses become the core's (``casefiles.reviewing``, with
"rejected"), and ReviewDecision leaves people's state. Its table stays where it is, with
its rows and triggers: legal.0001 takes it over (the audit chain binds its rows by the
table's name)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("people", "0005_bind_history_to_audit_chain"),
    ]

    operations = [
        migrations.AlterField(
            model_name="testimony",
            name="status",
            field=models.CharField(
                choices=[
                    ("draft", "New"),
                    ("submitted", "Submitted"),
                    ("approved", "Approved"),
                    ("returned", "Returned"),
                    ("rejected", "Rejected"),
                ],
                default="draft",
                max_length=16,
                verbose_name="status",
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ReviewDecision")],
            database_operations=[],
        ),
    ]
