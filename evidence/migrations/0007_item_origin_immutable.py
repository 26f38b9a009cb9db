"""An item's original filename and its path on the medium never change, at the database
too (the reference, case and original were guarded by 0005)."""

from django.db import migrations

import casefiles.db


class Migration(migrations.Migration):
    dependencies = [("evidence", "0006_batch_name_encoding")]

    operations = [
        casefiles.db.ImmutableColumns(
            "EvidenceItem", ["original_filename", "original_path"], suffix="immutable_origin"
        )
    ]
