"""Bind into the audit chain the status changes written before each change's audit entry
carried their content hash (see docs/audit-log.md, "Rows written before binding")."""

from django.db import migrations

import casefiles.bindings


class Migration(migrations.Migration):
    dependencies = [
        ("casefiles", "0010_list_page_indexes"),
        ("missing", "0004_one_victim_status"),
    ]

    operations = [
        migrations.RunPython(
            casefiles.bindings.bind_existing("missing", "StatusChange"),
            migrations.RunPython.noop,
        )
    ]
