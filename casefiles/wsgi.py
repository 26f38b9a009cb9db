"""WSGI entry point (gunicorn casefiles.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casefiles.settings")
application = get_wsgi_application()
