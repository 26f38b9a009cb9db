from django.urls import path

from . import views

app_name = "evidence"
urlpatterns = [
    path("cases/<str:ref>/evidence/", views.gallery, name="gallery"),
    path("cases/<str:ref>/evidence/upload/", views.upload, name="upload"),
    path("cases/<str:ref>/evidence/batches/<int:pk>/", views.batch_detail, name="batch_detail"),
    path("cases/<str:ref>/evidence/<str:item_ref>/", views.item_detail, name="item_detail"),
    path("cases/<str:ref>/evidence/<str:item_ref>/edit/", views.item_edit, name="item_edit"),
    path(
        "cases/<str:ref>/evidence/<str:item_ref>/identifications/new/",
        views.identification_create,
        name="identification_create",
    ),
    path(
        "cases/<str:ref>/evidence/<str:item_ref>/custody/new/",
        views.custody_create,
        name="custody_create",
    ),
    path("cases/<str:ref>/evidence/<str:item_ref>/thumbnail/", views.thumbnail, name="thumbnail"),
    path("cases/<str:ref>/evidence/<str:item_ref>/preview/", views.preview, name="preview"),
    path("cases/<str:ref>/evidence/<str:item_ref>/original/", views.download, name="download"),
]
