"""System checks ``check --deploy`` lacks: a strict CSP, Argon2 passwords, two admins."""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.utils.csp import CSP

CSP_MIDDLEWARE = "django.middleware.csp.ContentSecurityPolicyMiddleware"
ARGON2 = "django.contrib.auth.hashers.Argon2PasswordHasher"
_LOOSE_SOURCES = {"*", "http:", "https:", CSP.UNSAFE_INLINE, CSP.UNSAFE_EVAL}


@register(Tags.security, deploy=True)
def check_csp(app_configs, **kwargs):
    errors = []
    if CSP_MIDDLEWARE not in settings.MIDDLEWARE:
        errors.append(
            Error(
                "ContentSecurityPolicyMiddleware is not installed: pages send no CSP.",
                hint=f"Add '{CSP_MIDDLEWARE}' to MIDDLEWARE.",
                id="athar.E001",
            )
        )
    policy = getattr(settings, "SECURE_CSP", {}) or {}
    if list(policy.get("default-src", [])) not in ([CSP.SELF], [CSP.NONE]):
        errors.append(
            Error(
                "SECURE_CSP must set default-src to 'self': pages may load nothing from "
                "other origins.",
                id="athar.E002",
            )
        )
    loose = sorted(
        f"{name} {src}"
        for name, sources in policy.items()
        for src in sources
        if src in _LOOSE_SOURCES
    )
    if loose:
        errors.append(
            Error(f"SECURE_CSP allows unsafe sources: {', '.join(loose)}.", id="athar.E003")
        )
    return errors


@register(Tags.security, deploy=True)
def check_password_hashers(app_configs, **kwargs):
    if settings.PASSWORD_HASHERS[:1] != [ARGON2]:
        return [
            Error(
                "Argon2 must be the first of PASSWORD_HASHERS.",
                hint=f"Put '{ARGON2}' first.",
                id="athar.E004",
            )
        ]
    return []


@register(Tags.security, deploy=True)
def check_two_admins(app_configs, **kwargs):
    """Four eyes need two admins: with fewer, every step that needs a second admin waits
    (decision 0022). Warned on a production installation, where it matters."""
    if not settings.PRODUCTION:
        return []
    from django.db import DatabaseError

    from .access import system_admins

    try:
        count = system_admins().count()
    except DatabaseError as exc:
        return [Warning(f"Could not count the system admins: {exc}.", id="athar.W002")]
    if count >= 2:
        return []
    return [
        Warning(
            f"This installation has {count} system admin(s): grants, resets and four-eyes "
            "steps that need a second admin will wait.",
            hint="Create a second admin (README, section Two admins): `manage.py "
            "createsuperuser` once more, by another person.",
            id="athar.W001",
        )
    ]
