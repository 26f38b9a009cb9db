"""The one rule of every Django admin page in Athar: it never reads or searches case content.

Django's admin hides a field from a form but still lets a changelist filter on any local
field named in the URL (``?details__icontains=…``, ``?summary__startswith=…``): the count
of rows answers yes or no, and a field is read back one character at a time. So:

- a changelist accepts only the query parameters of the filters its admin declares
  (``list_filter``, ``date_hierarchy``); any other lookup is refused whatever its value,
  with Django's answer to a disallowed lookup (400 Bad Request);
- searches and declared filters only reach the fields listed in ``ADMIN_LOOKUP_FIELDS``:
  names of accounts, references and statuses, never what a case holds (summaries, audit
  details, statements, file names, descriptions, identities);
- every admin of the site uses ``AtharAdminMixin``; admins that Django and third-party
  apps register are re-registered with it (``adopt_registered_admins``).

The system check ``check_admin_lookups`` (errors athar.E010 to E012) refuses an admin
that breaks one of these, so a new admin cannot open the hole again unnoticed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.admin.filters import FieldListFilter, ListFilter, SimpleListFilter
from django.contrib.admin.utils import get_fields_from_path
from django.core.checks import Error, Tags, register
from django.core.exceptions import FieldDoesNotExist
from django.db.models.constants import LOOKUP_SEP

# The fields an admin may search or filter on, by model: account names, references,
# statuses and dates. Everything else a model holds is refused as a lookup.
ADMIN_LOOKUP_FIELDS: dict[str, frozenset[str]] = {
    "auth.User": frozenset(
        {"username", "first_name", "last_name", "email", "is_staff", "is_superuser"}
        | {"is_active", "groups"}
    ),
    "auth.Group": frozenset({"name"}),
    # An admin manages access by a case's reference and title (shown on the list), never
    # by its summary.
    "casefiles.Case": frozenset({"reference", "title", "status", "sensitivity"}),
    "casefiles.Membership": frozenset({"role", "case"}),
    # Labels of actors and targets are codes and references (shown on the list); the
    # details are the case's content.
    "casefiles.AuditEntry": frozenset({"actor_label", "target_label", "action"}),
    "casefiles.AccessRequest": frozenset({"status"}),
    # A vocabulary is reference data, not case content: codes and labels are searchable.
    "vocabularies.Term": frozenset({"scheme", "code", "label_en", "label_ar"}),
    "django_tasks_database.DBTaskResult": frozenset({"status", "priority", "queue_name"}),
    "axes.AccessAttempt": frozenset(
        {"attempt_time", "path_info", "ip_address", "username", "user_agent"}
    ),
    "axes.AccessLog": frozenset(
        {"attempt_time", "logout_time", "path_info", "ip_address", "username", "user_agent"}
    ),
    "axes.AccessFailureLog": frozenset(
        {"attempt_time", "locked_out", "path_info", "ip_address", "username", "user_agent"}
    ),
}

_SEARCH_PREFIXES = "^=@"


def _final_field(model: Any, path: str) -> tuple[str, str] | None:
    """The model and name of the field a lookup path ends on (transforms and lookups
    after the last field are ignored), or None when it names no field."""
    field = None
    for part in path.split(LOOKUP_SEP):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            break  # a lookup or a transform: the path ended on ``field``
        if field.related_model is None:
            break
        model = field.related_model
    if field is None:
        return None
    return field.model._meta.label, field.name


def lookup_field_allowed(model: Any, path: str) -> bool:
    """Whether a search or filter path ends on a field of ``ADMIN_LOOKUP_FIELDS``."""
    final = _final_field(model, path.lstrip(_SEARCH_PREFIXES))
    return final is not None and final[1] in ADMIN_LOOKUP_FIELDS.get(final[0], ())


def _filter_path(item: Any) -> str | None:
    """The field path of a declared list filter (None for a filter written in code)."""
    if isinstance(item, (list, tuple)):
        item = item[0]
    return item if isinstance(item, str) else None


if TYPE_CHECKING:
    # What the mixin is mixed into: it reads the admin's model and filters.
    _ModelAdmin = admin.ModelAdmin
else:
    _ModelAdmin = object


class AtharAdminMixin(_ModelAdmin):
    """Changelists take no lookup but their declared filters' own parameters, and search
    only the fields ``ADMIN_LOOKUP_FIELDS`` allows."""

    def declared_filter_parameters(self, request: Any) -> frozenset[str]:
        """The query parameters the declared filters read (as Django's filters name
        them), worked out once per request."""
        cache = request.__dict__.setdefault("_athar_filter_parameters", {})
        key = type(self)
        if key not in cache:
            params: set[str] = set()
            for item in self.get_list_filter(request):
                if isinstance(item, type) and issubclass(item, SimpleListFilter):
                    if item.parameter_name:  # Django refuses a filter without one
                        params.add(item.parameter_name)
                elif isinstance(item, type) and issubclass(item, ListFilter):
                    spec = item(request, {}, self.model, self)
                    params.update(p for p in spec.expected_parameters() if p)
                else:
                    path = _filter_path(item)
                    make: Callable[..., FieldListFilter] = FieldListFilter.create
                    if isinstance(item, (list, tuple)):
                        make = item[1]  # type: ignore[assignment]  # a FieldListFilter class
                    if path is None:  # Django's own checks refuse it too (admin.E116)
                        raise TypeError(f"{key.__name__}.list_filter: {item!r} names no field")
                    field = get_fields_from_path(self.model, path)[-1]
                    spec = make(field, request, {}, self.model, self, field_path=path)
                    params.update(p for p in spec.expected_parameters() if p)
            if self.date_hierarchy:
                params.update(f"{self.date_hierarchy}__{p}" for p in ("year", "month", "day"))
            cache[key] = frozenset(params)
        return cache[key]

    def lookup_allowed(self, lookup: str, value: Any, request: Any) -> bool:
        # Django allows any local field here; only declared filters are allowed in Athar.
        return lookup in self.declared_filter_parameters(request)

    def get_search_fields(self, request: Any):
        fields = super().get_search_fields(request)
        return [f for f in fields if lookup_field_allowed(self.model, f)]


def adopt_registered_admins(site: admin.AdminSite = admin.site) -> None:
    """Re-register every admin not yet under the rule (Django's own and third-party apps'
    admins) as a subclass that follows it."""
    for model, model_admin in list(site._registry.items()):
        if isinstance(model_admin, AtharAdminMixin):
            continue
        cls = type(model_admin)
        site.unregister(model)
        site.register(model, type(cls.__name__, (AtharAdminMixin, cls), {}))


@register(Tags.admin, Tags.security)
def check_admin_lookups(app_configs=None, site: admin.AdminSite | None = None, **kwargs):
    """Every registered admin follows the rule above."""
    site = site or admin.site
    errors = []
    for model, model_admin in site._registry.items():
        label = f"{type(model_admin).__name__} ({model._meta.label})"
        if not isinstance(model_admin, AtharAdminMixin):
            errors.append(
                Error(
                    f"{label} does not use AtharAdminMixin: its changelist accepts lookups "
                    "on any field.",
                    hint="Derive it from casefiles.admin_policy.AtharAdminMixin.",
                    obj=model_admin,
                    id="athar.E010",
                )
            )
        for path in model_admin.search_fields or ():
            if not lookup_field_allowed(model, path):
                errors.append(
                    Error(
                        f"{label} searches {path!r}, which is not in ADMIN_LOOKUP_FIELDS: "
                        "admin searches must not touch case content.",
                        obj=model_admin,
                        id="athar.E011",
                    )
                )
        declared = [_filter_path(item) for item in model_admin.list_filter or ()]
        declared.append(model_admin.date_hierarchy)
        for path in filter(None, declared):
            if not lookup_field_allowed(model, path):
                errors.append(
                    Error(
                        f"{label} filters on {path!r}, which is not in ADMIN_LOOKUP_FIELDS: "
                        "a filter lists the values it offers.",
                        obj=model_admin,
                        id="athar.E012",
                    )
                )
    return errors
