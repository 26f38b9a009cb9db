"""Bind into the audit chain the testimony versions, review decisions and consent records
written before each row's audit entry carried its content hash (see docs/audit-log.md,
"Rows written before binding")."""

from django.db import migrations

import casefiles.bindings


class Migration(migrations.Migration):
    dependencies = [
        ("casefiles", "0006_second_factor_resets"),
        ("people", "0004_protection_changes"),
    ]

    operations = [
        migrations.RunPython(
            casefiles.bindings.bind_existing(
                "people", "TestimonyVersion", "ReviewDecision", "Consent"
            ),
            migrations.RunPython.noop,
        )
    ]
