# Sessions, enrolment codes and second-factor resets belong to the accounts app from now
# on (accounts.0001 takes them into its state). Their tables stay as they are.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("casefiles", "0008_grant_requests"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="UserSession"),
                migrations.DeleteModel(name="EnrolmentCode"),
                migrations.DeleteModel(name="SecondFactorReset"),
            ],
            database_operations=[],
        )
    ]
