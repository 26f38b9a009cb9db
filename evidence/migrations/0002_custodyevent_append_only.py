from django.db import migrations

import casefiles.db


class Migration(migrations.Migration):
    dependencies = [("evidence", "0001_initial")]

    operations = [casefiles.db.AppendOnly("CustodyEvent")]
