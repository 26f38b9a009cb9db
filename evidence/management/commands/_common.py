from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from casefiles.models import Case


def get_case(reference: str) -> Case:
    try:
        return Case.objects.get(reference=reference)
    except Case.DoesNotExist:
        raise CommandError(f"No case {reference!r}.") from None


def get_operator(username: str | None):
    """The account the command acts as: --as, else the one superuser, else refuse."""
    users = get_user_model().objects.filter(is_active=True)
    if username:
        user = users.filter(username=username).first()
        if user is None:
            raise CommandError(f"No active user {username!r}.")
        return user
    supers = list(users.filter(is_superuser=True)[:2])
    if len(supers) != 1:
        raise CommandError("Say who takes the evidence in: --as USERNAME.")
    return supers[0]
