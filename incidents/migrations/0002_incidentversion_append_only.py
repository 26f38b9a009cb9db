from django.db import migrations

import casefiles.db


class Migration(migrations.Migration):
    dependencies = [("incidents", "0001_incidents")]

    operations = [casefiles.db.AppendOnly("IncidentVersion")]
