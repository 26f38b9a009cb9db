"""Exact query counts of the disclosure pages: the list with its request form, and a
package's page with its preview (as the lead who decides, and as the requester)."""

import json

import pytest
from django.urls import reverse

from disclosure import services

from .conftest import BODY

pytestmark = pytest.mark.django_db


def _exactly(client, django_assert_num_queries, count, url):
    client.get(url)  # the session and caches warm
    with django_assert_num_queries(count):
        response = client.get(url)
    assert response.status_code == 200


def test_the_list_and_a_packages_page_ask_a_fixed_number_of_queries(
    client, world, django_assert_num_queries
):
    package = services.request_package(
        actor=world.cast.lawyer, case=world.case, recipient=BODY, purpose="prosecution"
    )
    client.force_login(world.cast.lawyer)
    _exactly(
        client,
        django_assert_num_queries,
        10,
        reverse("disclosure:packages", args=[world.case.reference]),
    )
    # 3 of them read the case's protected people and their name digests (decision 0029).
    _exactly(client, django_assert_num_queries, 15, package.get_absolute_url())
    client.force_login(world.cast.lead)
    _exactly(client, django_assert_num_queries, 16, package.get_absolute_url())

    # More records, the same queries: no question is asked once per record.
    from django.utils import timezone

    from people import services as people_services

    from .conftest import approve

    for n in range(3):
        testimony = people_services.create_testimony(
            actor=world.cast.investigator,
            case=world.case,
            witness=world.standard,
            text=f"Another statement {n}.",
            taken_at=timezone.now(),
            language="en",
            mode="in_person",
        )
        approve(testimony, world.cast.investigator, world.cast.lead)
    _exactly(client, django_assert_num_queries, 16, package.get_absolute_url())


def test_a_build_asks_the_same_queries_whatever_the_number_of_testimonies(world, tmp_path):
    """Each testimony's approved version is read for the whole package at once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from casefiles.services import register_signing_key
    from disclosure.services import building
    from people import services as people_services

    from .conftest import approve

    register_signing_key()  # the key's first use (listed, audited) is once, not per build

    def built(name):
        package = services.request_package(
            actor=world.cast.lawyer,
            case=world.case,
            recipient=BODY,
            purpose="prosecution",
            select="all",
        )
        package = services.approve_package(actor=world.cast.lead, package=package)
        with CaptureQueriesContext(connection) as queries:
            building.write_bag(package, tmp_path / name)
        testimonies = json.loads((tmp_path / name / "metadata/testimonies.json").read_text())
        return len(testimonies), len(queries.captured_queries)

    few, few_queries = built("few")
    for n in range(3):
        testimony = people_services.create_testimony(
            actor=world.cast.investigator,
            case=world.case,
            witness=world.standard,
            text=f"Another statement {n}.",
            taken_at=timezone.now(),
            language="en",
            mode="in_person",
        )
        approve(testimony, world.cast.investigator, world.cast.lead)
    many, many_queries = built("many")
    assert many == few + 3
    assert many_queries == few_queries, "a query per testimony"
