from django.urls import path

import casefiles.converters  # noqa: F401 (registers the text converter)

from . import graphic_views, views

app_name = "evidence"
urlpatterns = [
    path("cases/<text:ref>/evidence/", views.gallery, name="gallery"),
    path("cases/<text:ref>/evidence/upload/", views.upload, name="upload"),
    path("cases/<text:ref>/evidence/batches/<int:pk>/", views.batch_detail, name="batch_detail"),
    path("cases/<text:ref>/evidence/<text:item_ref>/", views.item_detail, name="item_detail"),
    path("cases/<text:ref>/evidence/<text:item_ref>/edit/", views.item_edit, name="item_edit"),
    path(
        "cases/<text:ref>/evidence/<text:item_ref>/identifications/new/",
        views.identification_create,
        name="identification_create",
    ),
    path(
        "cases/<text:ref>/evidence/<text:item_ref>/custody/new/",
        views.custody_create,
        name="custody_create",
    ),
    path(
        "cases/<text:ref>/evidence/<text:item_ref>/graphic/",
        graphic_views.mark_graphic,
        name="mark_graphic",
    ),
    path("cases/<text:ref>/evidence/<text:item_ref>/reveal/", graphic_views.reveal, name="reveal"),
    path("cases/<text:ref>/evidence/<text:item_ref>/thumbnail/", views.thumbnail, name="thumbnail"),
    path("cases/<text:ref>/evidence/<text:item_ref>/preview/", views.preview, name="preview"),
    path("cases/<text:ref>/evidence/<text:item_ref>/original/", views.download, name="download"),
]
