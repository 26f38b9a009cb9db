"""Demo data for a first look: fictional cases and one account per role. Idempotent."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from casefiles import services
from casefiles.access import ADMIN_GROUP, INVESTIGATOR_GROUP, LAWYER_GROUP, Role
from casefiles.models import Case, Membership

# username, full name, system groups, staff; the password is "athar-demo-<username>".
DEMO_USERS = [
    ("admin", "Demo Admin", [ADMIN_GROUP], True),
    ("lead", "Layla Haddad", [INVESTIGATOR_GROUP], False),
    ("investigator", "Omar Khalil", [INVESTIGATOR_GROUP], False),
    ("lawyer", "Sara Nasser", [LAWYER_GROUP], False),
    ("observer", "Yusuf Darwish", [], False),
]

DEMO_CASES = [
    {
        "reference": "DEMO-2014-001",
        "title": "Photographs of detainees (fictional) — صور المعتقلين",
        "summary": (
            "A fictional case for trying Athar: a drive of forensic photographs smuggled out "
            "by a military-police photographer, and the testimony of families who search "
            "for the missing.\n\n"
            "قضية وهمية لتجربة «أثر»: قرص من الصور الجنائية هرّبه مصوّر في الشرطة العسكرية، "
            "وشهادات عائلات تبحث عن المفقودين."
        ),
        "jurisdiction": "Universal jurisdiction (fictional)",
        "members": {
            "lead": Role.LEAD,
            "investigator": Role.INVESTIGATOR,
            "lawyer": Role.LAWYER,
            "observer": Role.OBSERVER,
        },
    },
    {
        "reference": "DEMO-2013-007",
        "title": "شهادات فرع التحقيق (قضية وهمية) — Interrogation branch testimony",
        "summary": (
            "شهادات وهمية لمعتقلين سابقين عن ظروف الاحتجاز في فرع تحقيق.\n\n"
            "Fictional testimony of former detainees about conditions in an interrogation "
            "branch. The demo investigator is not a member of this case."
        ),
        "jurisdiction": "",
        "members": {"lead": Role.LEAD, "lawyer": Role.LAWYER},
    },
]


def demo_password(username: str) -> str:
    return f"athar-demo-{username}"


class Command(BaseCommand):
    help = "Load fictional demo cases and one user per role (never in production)."

    def handle(self, *args, **options):
        if getattr(settings, "PRODUCTION", False):
            raise CommandError("Demo data is never loaded in production (ATHAR_ENV=production).")
        created = 0
        with transaction.atomic():
            users = {}
            for username, full_name, groups, staff in DEMO_USERS:
                user, new = get_user_model().objects.get_or_create(
                    username=username,
                    defaults={
                        "first_name": full_name.split()[0],
                        "last_name": full_name.split()[-1],
                        "is_staff": staff,
                    },
                )
                if new:
                    user.set_password(demo_password(username))
                    user.save()
                    user.groups.set(Group.objects.filter(name__in=groups))
                    created += 1
                users[username] = user
            admin = users["admin"]
            for spec in DEMO_CASES:
                case = Case.objects.filter(reference=spec["reference"]).first()
                if case is None:
                    fields = {k: v for k, v in spec.items() if k != "members"}
                    case = services.create_case(actor=admin, **fields)
                    created += 1
                for username, role in spec["members"].items():
                    user = users[username]
                    if not Membership.objects.active().filter(user=user, case=case).exists():
                        services.grant_membership(actor=admin, case=case, user=user, role=role)
                        created += 1
        self.stdout.write(
            f"demo data: {created} objects created" if created else "demo data present"
        )
