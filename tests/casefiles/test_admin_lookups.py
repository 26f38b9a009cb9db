"""The Django admin is no oracle for case content: a changelist refuses every lookup that
is not one of its declared filters, and no admin search reaches what a case holds."""

import logging

import pytest
from django.contrib import admin
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.filters import FieldListFilter, ListFilter, SimpleListFilter
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.auth.admin import UserAdmin
from django.core.checks import Error
from django.db import models
from django.test import RequestFactory
from django.urls import reverse

from casefiles import audit
from casefiles.admin_policy import AtharAdminMixin, check_admin_lookups
from casefiles.models import AuditEntry, Case
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SECRET_SUMMARY = "Kept from admins: the informant lives above the bakery"
SECRET_FILE = "informant_face.jpg"
SECRET_REASON = "to call her mother"

# Lookups an attacker would try on a field, and key paths into JSON fields.
LOOKUPS = [
    "",
    "__exact",
    "__iexact",
    "__icontains",
    "__startswith",
    "__istartswith",
    "__regex",
    "__gt",
    "__in",
    "__isnull",
]
JSON_PATHS = [
    "__reason",
    "__reason__startswith",
    "__filename__icontains",
    "__name__icontains",
    "__has_key",
    "__contains",
    "__icontains",
]


@pytest.fixture
def planted(cast):
    """A summary and audit details an admin outside the case must not be able to read."""
    Case.objects.filter(pk=cast.case.pk).update(summary=SECRET_SUMMARY)
    audit.record(cast.investigator, "evidence.intake", case=cast.case, filename=SECRET_FILE, size=1)
    audit.record(cast.lead, "person.reveal", case=cast.case, reason=SECRET_REASON)
    return cast


def _changelist(model):
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def _declared_parameters(model_admin, request):
    """The query parameters Django's own filters read for the filters an admin declares."""
    params = set()
    for item in model_admin.get_list_filter(request):
        if isinstance(item, type) and issubclass(item, SimpleListFilter):
            params.add(item.parameter_name)
        elif isinstance(item, type) and issubclass(item, ListFilter):
            params.update(item(request, {}, model_admin.model, model_admin).expected_parameters())
        else:
            path, cls = item if isinstance(item, (list, tuple)) else (item, FieldListFilter.create)
            field = get_fields_from_path(model_admin.model, path)[-1]
            spec = cls(field, request, {}, model_admin.model, model_admin, field_path=path)
            params.update(spec.expected_parameters())
    if model_admin.date_hierarchy:
        params.update(f"{model_admin.date_hierarchy}__{p}" for p in ("year", "month", "day"))
    return params


def _lookups_on(model):
    """Every field of the model as a lookup, with the usual lookup types, key paths into
    JSON fields, and one step through each relation to the related model's fields."""
    for field in model._meta.get_fields():
        name = field.name
        for lookup in LOOKUPS:
            yield name + lookup
        if isinstance(field, models.JSONField):
            for path in JSON_PATHS:
                yield name + path
        if field.is_relation and field.related_model is not None:
            for sub in field.related_model._meta.get_fields():
                if not sub.is_relation:
                    yield f"{name}__{sub.name}"
                    yield f"{name}__{sub.name}__icontains"
                    yield f"{name}__{sub.name}__startswith"


def _values(lookup):
    if lookup.endswith("__isnull"):
        return ["1", "0"]
    # One value that would match the planted content, one that would not: the answer
    # must be the same refusal for both.
    return [SECRET_SUMMARY[:4], "zz-no-such-value"]


@pytest.fixture
def quiet_refusals():
    """Each refused lookup is logged with its traceback (Django's security logger)."""
    logger = logging.getLogger("django.security.DisallowedModelAdminLookup")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


def test_every_admin_changelist_refuses_every_lookup_but_its_declared_filters(
    client, planted, quiet_refusals
):
    """Every field of every registered model, as a lookup of its changelist.

    The page is asked through the whole stack once per model (a 400 for a content field,
    the declared filters working), and the sweep of every lookup asks each admin's
    changelist directly (two requests per lookup through the stack would take minutes):
    Django answers ``DisallowedModelAdminLookup`` with 400 Bad Request.
    """
    root = UserFactory(username="root", is_staff=True, is_superuser=True)  # in no case
    client.force_login(root)
    factory = RequestFactory()
    tried = 0
    for model, model_admin in admin.site._registry.items():
        url = _changelist(model)
        assert client.get(url).status_code == 200, url  # the page itself opens
        request = factory.get(url)
        request.user = root
        declared = _declared_parameters(model_admin, request)
        for param in declared:  # the declared filters still work
            value = "1" if param.endswith("isnull") else "x"
            assert client.get(url, {param: value}).status_code in (200, 302), (url, param)
        probes = [lookup for lookup in _lookups_on(model) if lookup not in declared]
        first = next(p for p in probes if p.endswith("__startswith"))
        assert client.get(url, {first: "a"}).status_code == 400, (url, first)
        for lookup in probes:
            for value in _values(lookup):
                request = factory.get(url, {lookup: value})
                request.user = root
                with pytest.raises(DisallowedModelAdminLookup):
                    model_admin.get_changelist_instance(request)
                tried += 1
    assert tried > 500, tried


def test_the_admin_reads_no_audit_details_or_case_summary_character_by_character(
    client, planted, quiet_refusals
):
    client.force_login(planted.admin)
    entries = _changelist(AuditEntry)
    cases = _changelist(Case)
    for url, query in [
        (entries, {"action": "evidence.intake", "details__icontains": SECRET_FILE[:3]}),
        (entries, {"action": "evidence.intake", "details__icontains": "qqq"}),
        (entries, {"details__reason__startswith": SECRET_REASON[:2]}),
        (entries, {"details__reason__startswith": "qq"}),
        (cases, {"summary__icontains": SECRET_SUMMARY[:5]}),
        (cases, {"summary__icontains": "qqqqq"}),
    ]:
        assert client.get(url, query).status_code == 400, query
    # The declared filter alone still works.
    response = client.get(entries, {"action": "evidence.intake"})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1


def test_no_admin_search_finds_a_case_by_its_content(client, planted):
    client.force_login(planted.admin)
    response = client.get(_changelist(Case), {"q": "bakery"})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 0
    response = client.get(_changelist(Case), {"q": planted.case.reference})
    assert response.context["cl"].result_count == 1  # the reference is what admins search
    for term in (SECRET_FILE, SECRET_REASON):
        response = client.get(_changelist(AuditEntry), {"q": term})
        assert response.status_code == 200
        assert response.context["cl"].result_count == 0, term


def test_every_registered_admin_follows_the_rule_the_user_admin_included():
    registry = admin.site._registry
    assert all(isinstance(a, AtharAdminMixin) for a in registry.values()), [
        type(a).__name__ for a in registry.values() if not isinstance(a, AtharAdminMixin)
    ]
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    assert isinstance(registry[get_user_model()], UserAdmin)
    assert Group in registry
    assert check_admin_lookups() == []


def test_the_system_check_refuses_an_admin_that_could_read_case_content():
    site = admin.AdminSite(name="scratch")

    class PlainAdmin(admin.ModelAdmin):
        pass

    class SearchesSummaries(AtharAdminMixin, admin.ModelAdmin):
        search_fields = ["reference", "summary"]

    class FiltersOnDetails(AtharAdminMixin, admin.ModelAdmin):
        list_filter = ["action", "details"]

    class ThroughARelation(AtharAdminMixin, admin.ModelAdmin):
        search_fields = ["case__summary", "user__username"]

    from casefiles.models import AccessRequest, Membership

    site.register(Case, SearchesSummaries)
    site.register(AuditEntry, FiltersOnDetails)
    site.register(Membership, ThroughARelation)
    site.register(AccessRequest, PlainAdmin)
    errors = check_admin_lookups(site=site)
    assert all(isinstance(e, Error) for e in errors)
    found = sorted(
        (e.id, e.msg.split(" ")[0], e.msg.split("'")[1] if "'" in e.msg else "") for e in errors
    )
    assert found == [
        ("athar.E010", "PlainAdmin", ""),
        ("athar.E011", "SearchesSummaries", "summary"),
        ("athar.E011", "ThroughARelation", "case__summary"),
        ("athar.E012", "FiltersOnDetails", "details"),
    ]
