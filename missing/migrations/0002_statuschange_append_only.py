from django.db import migrations

import casefiles.db


class Migration(migrations.Migration):
    dependencies = [("missing", "0001_profiles")]

    operations = [casefiles.db.AppendOnly("StatusChange")]
