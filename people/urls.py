from django.urls import path

import casefiles.converters  # noqa: F401 (registers the text converter)

from . import testimony_views, views

app_name = "people"

_person = "cases/<text:ref>/people/<text:code>/"
_testimony = "cases/<text:ref>/testimonies/<int:testimony_id>/"

urlpatterns = [
    path("cases/<text:ref>/people/", views.people_list, name="people_list"),
    path("cases/<text:ref>/people/new/", views.person_create, name="person_create"),
    path("cases/<text:ref>/people/export.csv", views.people_export, name="people_export"),
    path(_person, views.person_detail, name="person_detail"),
    path(f"{_person}reveal/", views.person_reveal, name="person_reveal"),
    path(f"{_person}names/", views.person_names, name="person_names"),
    path(f"{_person}protection/", views.person_protection, name="person_protection"),
    path(f"{_person}status/", views.person_status, name="person_status"),
    path(f"{_person}relations/new/", views.relation_create, name="relation_create"),
    path(f"{_person}consents/new/", views.consent_create, name="consent_create"),
    path(
        f"{_person}consents/<int:consent_id>/withdraw/",
        views.consent_withdraw,
        name="consent_withdraw",
    ),
    path("cases/<text:ref>/testimonies/", testimony_views.testimony_list, name="testimony_list"),
    path(
        "cases/<text:ref>/testimonies/new/",
        testimony_views.testimony_create,
        name="testimony_create",
    ),
    path(_testimony, testimony_views.testimony_detail, name="testimony_detail"),
    path(f"{_testimony}versions/new/", testimony_views.version_create, name="version_create"),
]
