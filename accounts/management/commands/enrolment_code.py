"""manage.py enrolment_code USERNAME: a one-time code to set up a second factor.

For the first admin of a new instance (created with ``createsuperuser``), or whenever no
admin can sign in to issue one from the user's page. Audited, as one issued there is.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts import services, twofactor


class Command(BaseCommand):
    help = "Issue a one-time enrolment code with which a user sets up a second factor."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"No active user {username!r}.")
        if twofactor.has_confirmed_device(user):
            raise CommandError(
                f"{username} has a second factor; an admin resets it on their user page."
            )
        code, expires_at = services.issue_enrolment_code(actor=None, user=user)
        self.stdout.write(code)
        self.stderr.write(
            f"Works once, until {expires_at:%Y-%m-%d %H:%M} UTC: give it to {username} "
            "yourself; they enter it at their first sign-in."
        )
