from django.urls import path

import casefiles.converters  # noqa: F401 (registers the text converter)

from . import views

app_name = "incidents"
_incident = "cases/<text:ref>/incidents/<text:incident_ref>/"
urlpatterns = [
    path("cases/<text:ref>/incidents/", views.incident_list, name="incident_list"),
    path("cases/<text:ref>/timeline/", views.case_timeline, name="case_timeline"),
    path("cases/<text:ref>/map/", views.case_map, name="case_map"),
    path("cases/<text:ref>/incidents/new/", views.incident_create, name="incident_create"),
    path(_incident, views.incident_detail, name="incident_detail"),
    path(f"{_incident}edit/", views.incident_edit, name="incident_edit"),
    path(f"{_incident}acts/new/", views.act_add, name="act_add"),
    path(
        f"{_incident}acts/<int:act_id>/perpetrators/", views.perpetrator_add, name="perpetrator_add"
    ),
    path(f"{_incident}acts/<int:act_id>/remove/", views.act_remove, name="act_remove"),
    path(f"{_incident}links/new/", views.link_add, name="link_add"),
    path(f"{_incident}links/<int:incident_link_id>/remove/", views.link_remove, name="link_remove"),
]
