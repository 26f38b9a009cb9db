"""A victim's detainee number and detention branch are sealed in their antemortem profile
only (decision 0023): ``people.Person`` kept them in plain text beside the profile.

Forwards, for each person holding either value: their profile (one is made for a person
without one, by whoever registered them) seals it, under the current field key, bound to
its row and column (``people.crypto``); where the profile already held another detainee
number both are kept, the profile's first. The person's columns are then emptied (people
0010 removes them). Every profile seals its detention branch ("" where none).

Then the chain binds, by one system entry per 2,000 rows, the state of every person's
victim details and of every profile as they now stand (``casefiles.bindings``, tracked
rows): from here on a sealed value changed behind the app's back is named by
``verify_audit``.

The reverse puts each profile's detainee number and branch back on its person (the
profiles made forwards stay).
"""

import uuid

from django.db import migrations, models

import casefiles.bindings
from people import crypto

SEALED = (
    "physical",
    "clothing",
    "marks",
    "dental",
    "last_seen_text",
    "detainee_number",
    "detention_branch",
    "family_contact",
)
PERSON_TRACKED = ["id", "last_seen_on", "last_seen_place", "victim_status"]
NOTE = (
    "victims' details and antemortem profiles as they stood when the chain began to bind "
    "their latest state (missing 0007, decision 0023): the chain proves each unchanged "
    "since the latest entry that binds it, not before this one"
)


def _aad(profile, name: str) -> bytes:
    return crypto.associated_data(profile._meta.db_table, profile.pk, f"enc_{name}")


def _joined(kept: str, moved: str) -> str:
    if not moved or moved == kept:
        return kept
    return f"{kept}; {moved}" if kept else moved


def move(apps, schema_editor):
    Person = apps.get_model("people", "Person")
    Profile = apps.get_model("missing", "Profile")
    holding = (
        Person.objects.exclude(detainee_number="", detention_branch="")
        .only("pk", "case_id", "created_by_id", "detainee_number", "detention_branch")
        .order_by("pk")
    )
    moved = set()
    for person in holding.iterator(chunk_size=500):
        profile = Profile.objects.filter(person_id=person.pk).first()
        if profile is None:
            profile = Profile(
                id=uuid.uuid4(),
                case_id=person.case_id,
                person_id=person.pk,
                created_by_id=person.created_by_id,
            )
            for name in SEALED:
                setattr(profile, f"enc_{name}", crypto.encrypt("", _aad(profile, name)))
            number = ""
        else:
            number = crypto.decrypt(profile.enc_detainee_number, _aad(profile, "detainee_number"))
        profile.enc_detainee_number = crypto.encrypt(
            _joined(number, person.detainee_number), _aad(profile, "detainee_number")
        )
        profile.enc_detention_branch = crypto.encrypt(
            person.detention_branch, _aad(profile, "detention_branch")
        )
        profile.save()
        moved.add(profile.pk)
        Person.objects.filter(pk=person.pk).update(detainee_number="", detention_branch="")
    for profile in Profile.objects.exclude(pk__in=moved).order_by("pk").iterator(chunk_size=500):
        profile.enc_detention_branch = crypto.encrypt("", _aad(profile, "detention_branch"))
        profile.save(update_fields=["enc_detention_branch"])


def back(apps, schema_editor):
    Person = apps.get_model("people", "Person")
    Profile = apps.get_model("missing", "Profile")
    for profile in Profile.objects.order_by("pk").iterator(chunk_size=500):
        Person.objects.filter(pk=profile.person_id).update(
            detainee_number=crypto.decrypt(
                profile.enc_detainee_number, _aad(profile, "detainee_number")
            )[:64],
            detention_branch=crypto.decrypt(
                profile.enc_detention_branch, _aad(profile, "detention_branch")
            )[:200],
        )


class Migration(migrations.Migration):
    dependencies = [
        ("casefiles", "0010_list_page_indexes"),
        ("people", "0009_victim_status_identified"),
        ("missing", "0006_session_counts"),
    ]

    operations = [
        migrations.AddField(
            model_name="profile",
            name="enc_detention_branch",
            field=models.TextField(default=""),
            preserve_default=False,
        ),
        migrations.RunPython(move, back),
        migrations.RunPython(
            casefiles.bindings.bind_existing(
                "people", "Person", columns={"Person": PERSON_TRACKED}, note=NOTE
            ),
            migrations.RunPython.noop,
        ),
        migrations.RunPython(
            casefiles.bindings.bind_existing("missing", "Profile", note=NOTE),
            migrations.RunPython.noop,
        ),
    ]
