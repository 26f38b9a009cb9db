"""System admins keep the vocabularies: they see terms in the Django admin, add terms
and relabel them (retiring is a change; deleting is refused)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

VOCABULARY_PERMISSIONS = [
    ("vocabularies", "view_term"),
    ("vocabularies", "add_term"),
    ("vocabularies", "change_term"),
]


def _permissions(apps):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Permission = apps.get_model("auth", "Permission")
    return [
        Permission.objects.get(content_type__app_label=app, codename=codename)
        for app, codename in VOCABULARY_PERMISSIONS
    ]


def grant(apps, schema_editor):
    admins, _ = apps.get_model("auth", "Group").objects.get_or_create(name="Admin")
    admins.permissions.add(*_permissions(apps))


def revoke(apps, schema_editor):
    admins = apps.get_model("auth", "Group").objects.filter(name="Admin").first()
    if admins is not None:
        admins.permissions.remove(*_permissions(apps))


class Migration(migrations.Migration):
    dependencies = [("vocabularies", "0002_thesauri_v1"), ("casefiles", "0003_system_groups")]

    operations = [migrations.RunPython(grant, revoke)]
