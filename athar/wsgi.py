"""WSGI entry point (gunicorn athar.wsgi)."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "athar.settings")
# Served through here is deployed: production unless ATHAR_ENV says otherwise, so that a
# forgotten variable refuses to start (no secrets) instead of serving with DEBUG on and
# keys made up in the data directory. (runserver has loaded its settings before.)
if not settings.configured:
    os.environ.setdefault("ATHAR_ENV", "production")
application = get_wsgi_application()
