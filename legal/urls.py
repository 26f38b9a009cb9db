from django.urls import path

import casefiles.converters  # noqa: F401 (registers the text converter)

from . import views

app_name = "legal"
urlpatterns = [
    path(
        "cases/<text:ref>/evidence/<text:item_ref>/review/", views.item_review, name="item_review"
    ),
    path(
        "cases/<text:ref>/testimonies/<int:testimony_id>/review/",
        views.testimony_review,
        name="testimony_review",
    ),
]
