from django.db import migrations

import casefiles.db


class Migration(migrations.Migration):
    dependencies = [("evidence", "0004_archive_hash")]

    operations = [
        # What identifies a stored original never changes (extra digests may be filled in).
        casefiles.db.ImmutableColumns("StoredFile", ["sha256", "size", "storage_key"]),
        # An item's original and the metadata read at intake are kept as recorded.
        casefiles.db.ImmutableColumns("EvidenceItem", ["original_id", "case_id", "reference"]),
        casefiles.db.AppendOnly("Provenance"),
    ]
