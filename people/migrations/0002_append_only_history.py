from django.db import migrations

import casefiles.db


class Migration(migrations.Migration):
    dependencies = [("people", "0001_initial")]

    operations = [
        casefiles.db.AppendOnly("TestimonyVersion"),
        casefiles.db.AppendOnly("Consent"),
        casefiles.db.AppendOnly("ReviewDecision"),
    ]
