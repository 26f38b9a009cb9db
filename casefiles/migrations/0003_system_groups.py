"""The system groups Investigator, Lawyer and Admin, and the Admin group's permissions."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ADMIN_PERMISSIONS = [
    ("auth", "add_user"),
    ("auth", "change_user"),
    ("auth", "view_user"),
    ("auth", "view_group"),
    ("casefiles", "add_case"),
    ("casefiles", "change_case"),
    ("casefiles", "view_case"),
    ("casefiles", "add_membership"),
    ("casefiles", "change_membership"),
    ("casefiles", "view_membership"),
    ("casefiles", "view_auditentry"),
]


def create_groups(apps, schema_editor):
    # Permissions are normally created after all migrations; make sure they exist now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name in ("Investigator", "Lawyer", "Admin"):
        Group.objects.get_or_create(name=name)
    admin = Group.objects.get(name="Admin")
    for app_label, codename in ADMIN_PERMISSIONS:
        admin.permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(
        name__in=["Investigator", "Lawyer", "Admin"]
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("casefiles", "0002_auditentry_append_only"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]
