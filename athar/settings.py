"""Athar settings: every knob comes from the environment, in this one module.

ATHAR_ENV            development (default; production through athar.wsgi and .asgi)
ATHAR_DATA_DIR       development secret, SQLite file and stored evidence (default: var/)
DATABASE_URL         default: SQLite at $ATHAR_DATA_DIR/athar.sqlite3
ATHAR_STORAGE_ROOT   where evidence originals live (default: $ATHAR_DATA_DIR/evidence)
ATHAR_SECRET_KEY     required in production; generated once into the data dir otherwise
ATHAR_ALLOWED_HOSTS  comma-separated host names (required in production)
ATHAR_FIELD_KEYS     identity encryption keys "id:base64key,..." (first encrypts); required
                     in production, generated once into the data dir otherwise
ATHAR_BLIND_INDEX_KEY  HMAC key of the name index; required in production, generated otherwise
(the README's settings table lists the others)
"""

import base64
import os
import re
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

from athar import env

BASE_DIR = Path(__file__).resolve().parent.parent

ATHAR_ENV = env.choice("ATHAR_ENV", ("development", "production"), "development")
PRODUCTION = ATHAR_ENV == "production"

DATA_DIR = Path(env.text("ATHAR_DATA_DIR") or BASE_DIR / "var").resolve()
STORAGE_ROOT = Path(env.text("ATHAR_STORAGE_ROOT") or DATA_DIR / "evidence").resolve()


def _development_value(filename: str, make) -> str:
    """Read a development secret from the data dir, creating it once (never in production)."""
    path = DATA_DIR / filename
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    value = make()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race: use its value
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value


def _development_secret_key() -> str:
    return _development_value("secret_key", lambda: secrets.token_urlsafe(50))


def _new_field_key() -> str:
    return "k1:" + base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


_KEY_ID = re.compile(r"^[A-Za-z0-9_-]{1,16}$")


def _parse_field_keys(raw: str) -> list[tuple[str, bytes]]:
    """``id:base64key,id:base64key``: AES-256 keys for identity fields, the first encrypts."""
    keys: list[tuple[str, bytes]] = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        key_id, _sep, encoded = item.partition(":")
        try:
            key = base64.urlsafe_b64decode(encoded.encode())
        except ValueError:
            key = b""
        if not _KEY_ID.match(key_id) or len(key) != 32:
            raise ImproperlyConfigured(
                "ATHAR_FIELD_KEYS: each key is 'id:' + 32 bytes in URL-safe base64."
            )
        if key_id in dict(keys):
            raise ImproperlyConfigured(f"ATHAR_FIELD_KEYS: key id {key_id!r} is repeated.")
        keys.append((key_id, key))
    if not keys:
        raise ImproperlyConfigured("ATHAR_FIELD_KEYS is required in production.")
    return keys


def _parse_blind_index_key(raw: str) -> bytes:
    try:
        key = base64.urlsafe_b64decode(raw.encode())
    except ValueError:
        key = b""
    if len(key) < 32:
        raise ImproperlyConfigured(
            "ATHAR_BLIND_INDEX_KEY (32+ bytes, URL-safe base64) is required in production."
        )
    return key


if PRODUCTION:
    SECRET_KEY = env.text("ATHAR_SECRET_KEY", "")
    if len(SECRET_KEY) < 50:
        raise ImproperlyConfigured("ATHAR_SECRET_KEY (50+ random characters) is required.")
    ALLOWED_HOSTS = env.items("ATHAR_ALLOWED_HOSTS")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ATHAR_ALLOWED_HOSTS is required in production.")
    DEBUG = False
    FIELD_KEYS = _parse_field_keys(env.text("ATHAR_FIELD_KEYS", ""))
    BLIND_INDEX_KEY = _parse_blind_index_key(env.text("ATHAR_BLIND_INDEX_KEY", ""))
else:
    SECRET_KEY = env.text("ATHAR_SECRET_KEY") or _development_secret_key()
    FIELD_KEYS = _parse_field_keys(
        env.text("ATHAR_FIELD_KEYS") or _development_value("field_keys", _new_field_key)
    )
    BLIND_INDEX_KEY = _parse_blind_index_key(
        env.text("ATHAR_BLIND_INDEX_KEY")
        or _development_value(
            "blind_index_key",
            lambda: base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        )
    )
    ALLOWED_HOSTS = env.items("ATHAR_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
    DEBUG = env.boolean("ATHAR_DEBUG", default=True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_filters",
    "django_tasks_db",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "django_otp_webauthn",
    "axes",
    "casefiles",
    "vocabularies",
    "accounts",
    "people",
    "evidence",
    "legal",
    "search",
    "disclosure",
    "places",
    "incidents",
    "missing",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    # Early, so every audit entry of the request (even a session ending) has the client.
    "casefiles.middleware.RequestContextMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    # Ends sessions that are idle, too old, signed out elsewhere or lack a second factor.
    "accounts.middleware.SessionPolicyMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "casefiles.middleware.NoStoreMiddleware",
    # Last, as django-axes asks: turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "athar.urls"
WSGI_APPLICATION = "athar.wsgi.application"
ASGI_APPLICATION = "athar.asgi.application"

# Length limits are said and checked by the server, never enforced by a browser cutting
# a pasted text short (casefiles/renderer.py).
FORM_RENDERER = "casefiles.renderer.FormRenderer"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "casefiles.context_processors.navigation",
            ],
        },
    },
]

# Database -----------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        env.text("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'athar.sqlite3'}",
        conn_max_age=0 if not PRODUCTION else 60,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers take the database lock when their transaction starts, so appends to the
    # audit chain are serialised; WAL lets readers go on meanwhile.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Auth -----------------------------------------------------------------------
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 12},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out (username, address) pair before any password check.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"  # members go on to their cases, an admin in no case sees what waits
LOGOUT_REDIRECT_URL = "login"

# Two factors -------------------------------------------------------------------
# Every account signs in with a second factor (TOTP or a one-time backup code). Demo
# mode (set by `make run`) exempts only the accounts `seed_demo` creates, never in
# production.
ATHAR_DEMO_MODE = env.boolean("ATHAR_DEMO_MODE")
if ATHAR_DEMO_MODE and PRODUCTION:
    raise ImproperlyConfigured("ATHAR_DEMO_MODE cannot be used with ATHAR_ENV=production.")
OTP_TOTP_ISSUER = env.text("ATHAR_OTP_ISSUER", "Athar")
ATHAR_BACKUP_CODES = 10
# Security keys and passkeys (WebAuthn) as a second factor, never instead of the password.
OTP_WEBAUTHN_ALLOW_PASSWORDLESS_LOGIN = False
OTP_WEBAUTHN_RP_NAME = "Athar"
# The relying party is a domain name (browsers refuse IP addresses): in development,
# open the app as http://localhost:PORT to use a security key, PORT being the one
# `make run PORT=...` serves on (it passes ATHAR_PORT; 8000 by default).
ATHAR_PORT = env.integer("ATHAR_PORT", 8000, minimum=1, maximum=65535)
OTP_WEBAUTHN_RP_ID = env.text("ATHAR_WEBAUTHN_RP_ID") or (
    ALLOWED_HOSTS[0] if PRODUCTION else "localhost"
)
OTP_WEBAUTHN_ALLOWED_ORIGINS = env.items("ATHAR_WEBAUTHN_ORIGINS") or (
    [f"https://{host}" for host in ALLOWED_HOSTS]
    if PRODUCTION
    else [f"http://localhost:{ATHAR_PORT}"]
)
# Revealing a protected identity needs a session signed in with a security key
# (phishing-resistant), not only a TOTP code. Off by default until every lead and
# investigator has registered a key.
ATHAR_REVEAL_NEEDS_SECURITY_KEY = env.boolean("ATHAR_REVEAL_NEEDS_SECURITY_KEY")
# A password step counts for this long before the second factor must follow (seconds).
ATHAR_2FA_PENDING_SECONDS = 300
# Setting up a second factor (first sign-in, or after a reset) needs a one-time code that
# an admin issues and hands over apart from the password; it works for this long.
ATHAR_ENROLMENT_CODE_HOURS = env.integer("ATHAR_ENROLMENT_CODE_HOURS", 72, minimum=1)

# Lockout ---------------------------------------------------------------------------
# Lock the pair (username, address), never the username alone: a flood of guesses from
# elsewhere must not lock the real user out at their own address.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = env.integer("ATHAR_LOCKOUT_FAILURES", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env.integer("ATHAR_LOCKOUT_MINUTES", 15, minimum=1))
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "casefiles.netaddr.client_ip_for_axes"
AXES_LOCKOUT_CALLABLE = "accounts.signin.lockout_response"
AXES_VERBOSE = False
# Sign-ins are in the audit log already; axes keeps only the failures it counts.
AXES_DISABLE_ACCESS_LOG = True
# Axes keeps the form of each failure: never a typed recovery code (or a password).
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "code"]
# The addresses (or networks) of the one reverse proxy in front of Athar. Only when a
# request comes from it is the right-most X-Forwarded-For entry taken as the client.
ATHAR_TRUSTED_PROXIES = env.items("ATHAR_TRUSTED_PROXIES")

# Sessions --------------------------------------------------------------------------
ATHAR_SESSION_IDLE_SECONDS = env.integer("ATHAR_SESSION_IDLE_MINUTES", 30, minimum=1) * 60
ATHAR_SESSION_MAX_SECONDS = env.integer("ATHAR_SESSION_MAX_HOURS", 12, minimum=1) * 3600

# Audit checkpoints -------------------------------------------------------------------
# Ed25519 private key, PEM (or its base64), that signs published checkpoints.
ATHAR_CHECKPOINT_ORIGIN = env.text("ATHAR_CHECKPOINT_ORIGIN", "athar/audit")
ATHAR_CHECKPOINT_KEY = env.text("ATHAR_CHECKPOINT_KEY", "")
if PRODUCTION and not ATHAR_CHECKPOINT_KEY:
    raise ImproperlyConfigured("ATHAR_CHECKPOINT_KEY (an Ed25519 private key) is required.")
# The schedule signs a checkpoint this often (manage.py checkpoint_schedule, decision
# 0025); verify_audit fails on a production installation whose newest checkpoint is older
# than the window.
ATHAR_CHECKPOINT_EVERY_MINUTES = env.integer("ATHAR_CHECKPOINT_EVERY_MINUTES", 60, minimum=1)
ATHAR_CHECKPOINT_MAX_AGE_MINUTES = env.integer("ATHAR_CHECKPOINT_MAX_AGE_MINUTES", 120, minimum=1)
ATHAR_CHECKPOINT_KEY_FILE = DATA_DIR / "checkpoint_key.pem"
# Optional RFC 3161 timestamp authority asked to timestamp each checkpoint, and the PEM
# file of its CA chain that every reply is verified against on receipt (required with it).
ATHAR_TSA_URL = env.text("ATHAR_TSA_URL", "")
ATHAR_TSA_CERTIFICATES = env.text("ATHAR_TSA_CERTIFICATES", "")
if ATHAR_TSA_URL and not ATHAR_TSA_CERTIFICATES:
    raise ImproperlyConfigured(
        "ATHAR_TSA_URL needs ATHAR_TSA_CERTIFICATES: a PEM file of the authority's CA chain."
    )
# Witnesses whose cosignatures of checkpoints Athar accepts: a file of lines
# "name path-to-public-key.pem" (docs/audit-checkpoints.md, "Witnesses").
ATHAR_WITNESS_KEYS = env.text("ATHAR_WITNESS_KEYS", "")

# Internationalisation -----------------------------------------------------------
LANGUAGE_CODE = "en"
FILTERS_EMPTY_CHOICE_LABEL = _("Any")  # a filter's "no choice" (django-filter shows "---------")
LANGUAGES = [("en", _("English")), ("ar", _("Arabic"))]
LOCALE_PATHS = [BASE_DIR / "casefiles" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# Static files and evidence storage ------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Production serves what collectstatic gathered; development serves from the apps.
STATIC_ROOT = DATA_DIR / "static" if PRODUCTION else None
WHITENOISE_USE_FINDERS = not PRODUCTION
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Originals: content-addressed, write-once, fsynced (evidence/storage.py).
    "evidence": {
        "BACKEND": "evidence.storage.EvidenceStorage",
        "OPTIONS": {"location": str(STORAGE_ROOT)},
    },
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Mail ---------------------------------------------------------------------------
if PRODUCTION:
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": env.text("ATHAR_EMAIL_HOST", "localhost"),
                "port": env.integer("ATHAR_EMAIL_PORT", 587, minimum=1),
                "username": env.text("ATHAR_EMAIL_USER", ""),
                "password": env.text("ATHAR_EMAIL_PASSWORD", ""),
                "use_tls": True,
            },
        }
    }
else:
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
DEFAULT_FROM_EMAIL = env.text("ATHAR_FROM_EMAIL", "athar@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# Security headers -------------------------------------------------------------------
# Nothing is ever loaded from another origin: the app works offline and leaks no visit.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = ATHAR_SESSION_MAX_SECONDS
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_HTTPONLY = True

if PRODUCTION:
    SECURE_SSL_REDIRECT = True
    SECURE_HSTS_SECONDS = env.integer("ATHAR_HSTS_SECONDS", 365 * 24 * 3600, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env.boolean("ATHAR_HSTS_PRELOAD", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    LANGUAGE_COOKIE_SECURE = True
    if env.boolean("ATHAR_BEHIND_TLS_PROXY"):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    CSRF_TRUSTED_ORIGINS = [f"https://{host}" for host in ALLOWED_HOSTS]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}

# Intake: files per database transaction (a killed ingest redoes at most this many).
INTAKE_CHUNK = env.integer("ATHAR_INTAKE_CHUNK", 400, minimum=1)

# Background tasks (browser batch uploads): a database queue, drained by `manage.py db_worker`.
TASKS = {"default": {"BACKEND": "django_tasks_db.backend.DatabaseBackend"}}
