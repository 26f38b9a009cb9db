from django.urls import path

import casefiles.converters  # noqa: F401 (registers the text converter)

from . import views

app_name = "missing"
_person = "cases/<text:ref>/missing/<text:code>/"
_session = "cases/<text:ref>/missing-sessions/<int:session_id>/"
urlpatterns = [
    path("cases/<text:ref>/missing/", views.missing_list, name="list"),
    path(_person, views.profile_detail, name="profile"),
    path(f"{_person}edit/", views.profile_edit, name="profile_edit"),
    path(f"{_person}status/", views.status_change, name="status"),
    path(f"{_person}sessions/new/", views.session_create, name="session_create"),
    path(_session, views.session_detail, name="session"),
    path(f"{_session}<int:candidate_id>/show/", views.candidate_show, name="show"),
    path(f"{_session}<int:candidate_id>/identify/", views.candidate_identify, name="identify"),
]
