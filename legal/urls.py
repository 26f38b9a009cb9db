from django.urls import path

import casefiles.converters  # noqa: F401 (registers the text converter)

from . import bulk_views, matrix_views, views, workspace_views

app_name = "legal"
_item = "cases/<text:ref>/evidence/<text:item_ref>/"
_testimony = "cases/<text:ref>/testimonies/<int:testimony_id>/"
urlpatterns = [
    path(f"{_item}review/", views.item_review, name="item_review"),
    path(f"{_testimony}review/", views.testimony_review, name="testimony_review"),
    path(f"{_item}links/", views.item_link, name="item_link"),
    path(f"{_testimony}links/", views.testimony_link, name="testimony_link"),
    path(f"{_item}assess/", views.item_assess, name="item_assess"),
    path(f"{_item}comments/", views.item_comment, name="item_comment"),
    path(f"{_testimony}comments/", views.testimony_comment, name="testimony_comment"),
    path(f"{_testimony}assess/", views.testimony_assess, name="testimony_assess"),
    path("cases/<text:ref>/links/<int:link_id>/confirm/", views.link_confirm, name="link_confirm"),
    path(
        "cases/<text:ref>/links/<int:link_id>/withdraw/", views.link_withdraw, name="link_withdraw"
    ),
    path("cases/<text:ref>/review/", workspace_views.workspace, name="workspace"),
    path("cases/<text:ref>/review/searches/", workspace_views.save_search, name="search_save"),
    path(
        "cases/<text:ref>/review/searches/<int:search_id>/delete/",
        workspace_views.delete_search,
        name="search_delete",
    ),
    path("cases/<text:ref>/review/bulk/", bulk_views.bulk_action, name="bulk"),
    path("cases/<text:ref>/review/bulk/<int:job_id>/", bulk_views.bulk_job, name="bulk_job"),
    path("cases/<text:ref>/matrix/", matrix_views.matrix, name="matrix"),
    path("cases/<text:ref>/matrix.csv", matrix_views.matrix_csv, name="matrix_csv"),
    path(
        "cases/<text:ref>/matrix/<text:element_code>/",
        matrix_views.element_links,
        name="element_links",
    ),
]
