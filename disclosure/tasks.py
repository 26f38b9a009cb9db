"""A package built by the task worker (``django_tasks_db``; ``manage.py db_worker``) while
its page shows progress."""

from django.tasks import task

from .models import Package
from .services import run_build


@task()
def build_package(package_id: int) -> str:
    """Build a package marked ``building``; a failure is recorded on it (and raised)."""
    package = Package.objects.select_related("case").get(pk=package_id)
    return run_build(package).sha256
