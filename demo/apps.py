from django.apps import AppConfig


class DemoConfig(AppConfig):
    """No models, no pages, no audit actions of its own: only ``manage.py seed_demo``."""

    name = "demo"
    verbose_name = "Demo data"
