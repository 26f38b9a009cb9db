"""System checks ``check --deploy`` lacks: a strict CSP and Argon2 passwords."""

from django.conf import settings
from django.core.checks import Error, Tags, register
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
