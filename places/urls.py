from django.urls import path

import casefiles.converters  # noqa: F401 (registers the text converter)

from . import views

app_name = "places"
urlpatterns = [
    path("places/", views.place_list, name="place_list"),
    path("places/<text:code>/", views.place_detail, name="place_detail"),
]
