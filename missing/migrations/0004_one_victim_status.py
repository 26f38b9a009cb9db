"""A victim has one status (decision 0021): each antemortem profile's status is copied
onto its person (the profile's, kept with its history, wins over what the person's page
said), then the profile's own field goes. The reverse puts the person's status back on
the profile (a person without one: missing, the old default)."""

from django.db import migrations


def to_person(apps, schema_editor):
    Profile = apps.get_model("missing", "Profile")
    Person = apps.get_model("people", "Person")
    rows = Profile.objects.only("pk", "person_id", "status").order_by("pk")
    for profile in rows.iterator(chunk_size=500):
        Person.objects.filter(pk=profile.person_id).exclude(victim_status=profile.status).update(
            victim_status=profile.status
        )


def to_profile(apps, schema_editor):
    Profile = apps.get_model("missing", "Profile")
    rows = Profile.objects.select_related("person").only("pk", "person__victim_status")
    for profile in rows.order_by("pk").iterator(chunk_size=500):
        profile.status = profile.person.victim_status or "missing"
        profile.save(update_fields=["status"])


class Migration(migrations.Migration):
    dependencies = [
        ("missing", "0003_seal_who_was_present"),
        ("people", "0009_victim_status_identified"),
    ]

    operations = [
        migrations.RunPython(to_person, to_profile),
        migrations.RemoveField(model_name="profile", name="status"),
    ]
