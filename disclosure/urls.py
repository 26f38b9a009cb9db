from django.urls import path

import casefiles.converters  # noqa: F401 (registers the text converter)

from . import redaction_views, views

app_name = "disclosure"
_package = "cases/<text:ref>/disclosure/<int:package_id>/"
urlpatterns = [
    path("cases/<text:ref>/disclosure/", views.package_list, name="packages"),
    path(_package, views.package_detail, name="package"),
    path(f"{_package}approve/", views.approve, name="approve"),
    path(f"{_package}refuse/", views.refuse, name="refuse"),
    path(f"{_package}withdraw/", views.withdraw, name="withdraw"),
    path(f"{_package}build/", views.build, name="build"),
    path(f"{_package}download/", views.download, name="package_download"),
    path(f"{_package}custody-report.pdf", views.package_report, name="package_report"),
    path(
        "cases/<text:ref>/evidence/<text:item_ref>/custody-report.pdf",
        views.item_report,
        name="item_report",
    ),
    path(
        "cases/<text:ref>/evidence/<text:item_ref>/redact/",
        redaction_views.redact,
        name="item_redact",
    ),
    path(
        "cases/<text:ref>/evidence/<text:item_ref>/redactions/<int:redaction_id>.jpg",
        redaction_views.redaction_image,
        name="redaction_image",
    ),
]
