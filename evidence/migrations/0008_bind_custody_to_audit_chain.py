"""Bind into the audit chain the custody events written before each event's audit entry
carried its content hash (see docs/audit-log.md, "Rows written before binding")."""

from django.db import migrations

import casefiles.bindings


class Migration(migrations.Migration):
    dependencies = [
        ("casefiles", "0006_second_factor_resets"),
        ("evidence", "0007_item_origin_immutable"),
    ]

    operations = [
        migrations.RunPython(
            casefiles.bindings.bind_existing("evidence", "CustodyEvent"),
            migrations.RunPython.noop,
        )
    ]
