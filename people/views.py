"""Pages of people and consent (testimony's: people/testimony_views.py). Each view finds
the case through the access policy (404 for non-members), validates a form, calls one
service and redirects.

No view but ``person_reveal`` opens an identity, and that one only after the reveal has
been audited; the identity goes into that one response and nowhere else.
"""

import csv

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from casefiles import audit, once
from casefiles.access import Action, account_of, can, get_case_for_user
from casefiles.exports import csv_cell
from casefiles.forms import form_errors
from casefiles.paging import Key, Keyset, list_query

from . import reads, services
from .filters import CaseRoleFilter
from .forms import (
    PART_LABELS,
    ConsentForm,
    NameLookupForm,
    NamesForm,
    PersonForm,
    ProtectionForm,
    RelationForm,
    RevealForm,
    VictimStatusForm,
    WithdrawalForm,
)
from .models import RoleKind
from .protection import (
    protection_change_refusal,
    protection_levels_for,
    reveal_refusal,
    testimony_refusal,
)

_case_people = reads.people_in_case


def _person(request, ref, code, action=Action.VIEW_CASE):
    case = get_case_for_user(request.user, ref, action)
    return case, reads.get_person_for_user(request.user, case, code)


def _form_page(request, case, form, title, back, intro="", submit=None, status=200):
    return render(
        request,
        "people/form.html",
        {
            "case": case,
            "form": form,
            "title": title,
            "intro": intro,
            "back": back,
            "submit": submit or _("Save"),
        },
        status=status,
    )


# By code, then role: a person with two roles in the case is listed once for each.
PEOPLE_PAGES = Keyset(Key("person__code"), Key("role"), size=100)


def people_list(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    roles = reads.roles_in_case(request.user, case).select_related("person")
    filterset = CaseRoleFilter(request.GET, queryset=roles)
    can_lookup = can(request.user, Action.REVEAL_IDENTITY, case)
    lookup, matches = None, None
    if request.method == "POST":
        # A name travels in a POST body, never in a URL that logs and history keep.
        if not can_lookup:
            raise Http404
        lookup = NameLookupForm(request.POST)
        if lookup.is_valid():
            matches = services.find_people_by_name(
                actor=account_of(request), case=case, name=lookup.cleaned_data["name"]
            )
            # Link each match through a case of the user where the person has a role.
            visible_roles = reads.roles_of(request.user, matches)
            refs = dict(visible_roles.values_list("person_id", "case__reference"))
            here = set(visible_roles.filter(case=case).values_list("person_id", flat=True))
            for person in matches:
                person.link_ref = (  # type: ignore[attr-defined]  # for the template
                    case.reference if person.pk in here else refs[person.pk]
                )
    return render(
        request,
        "people/person_list.html",
        {
            "case": case,
            "filter": filterset,
            "page": PEOPLE_PAGES.page(filterset.qs, request, query=list_query(request)),
            "filtered": bool(list_query(request)),
            "lookup": lookup or (NameLookupForm() if can_lookup else None),
            "matches": matches,
            "can_add": can(request.user, Action.ADD_PEOPLE, case),
            "can_export": can(request.user, Action.EXPORT, case),
        },
    )


def people_export(request: HttpRequest, ref: str) -> HttpResponse:
    """The people of a case as CSV: pseudonyms and case facts, never identities."""
    case = get_case_for_user(request.user, ref, Action.EXPORT)
    roles = (
        reads.roles_in_case(request.user, case)
        .select_related("person")
        .order_by("person__code", "role")
    )
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{case.reference}-people.csv"'
    writer = csv.writer(response)
    columns = [
        "code",
        "role",
        "protection_level",
        "victim_status",
        "last_seen_on",
        "last_seen_place",
    ]
    writer.writerow(columns)
    rows = 0
    for r in roles:
        p = r.person
        writer.writerow(
            csv_cell(v)
            for v in [
                p.code,
                r.role,
                p.protection_level,
                p.victim_status,
                p.last_seen_on or "",
                p.last_seen_place,
            ]
        )
        rows += 1
    audit.record(request.user, "people.export", case=case, rows=rows)
    return response


@once.creates
def person_create(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref, Action.ADD_PEOPLE)
    form = PersonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            person = services.register_person(
                actor=account_of(request),
                case=case,
                role=form.cleaned_data["role"],
                identity=form.identity(),
                protection_level=form.cleaned_data["protection_level"],
                **form.victim_fields(),
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(person.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("Register a person"),
        back=f"/cases/{case.reference}/people/",
        intro=_("The identity is stored encrypted; everyone else sees only the code."),
        status=400 if form.errors else 200,
    )


def _protection_levels(request, case, person):
    """The levels the user may set the person's protection to from this page: on the
    person's own case's page, by the rule the service applies."""
    if person.case_id != case.pk:
        return []
    return protection_levels_for(request.user, person, case)


def _protection_refusal(request, case, person):
    """Why the user has no level to set the person's protection to from this page."""
    if person.case_id != case.pk:
        return _("The protection level is changed on the page of the person's own case.")
    return protection_change_refusal(request.user, person, case) or _(
        "Only the case lead lowers a protection level."
    )


def _person_page(
    request,
    case,
    person,
    identity=None,
    reveal_form=None,
    status=200,
    status_form=None,
    seal_broken=False,
):
    relations = reads.relations_of(request.user, case, person)
    consents = list(
        reads.consents_of(request.user, case, person)
        .prefetch_related(Prefetch("withdrawals"))
        .select_related("recorded_by", "withdraws")
    )
    for consent in consents:
        consent.in_force = (  # type: ignore[attr-defined]  # for the template
            services.consent_in_force(consent) if consent.kind == "grant" else []
        )
    # The role allows revealing identities; the person's protection level may still not.
    role_may_reveal = can(request.user, Action.REVEAL_IDENTITY, case)
    refusal = reveal_refusal(request.user, person, case) if role_may_reveal else None
    can_reveal = role_may_reveal and refusal is None
    can_testify = can(request.user, Action.ADD_TESTIMONY, case)
    protection_levels = _protection_levels(request, case, person)
    # Naming a testimony's interviewers lets them reveal: kept to who may reveal already.
    testimony_refused = testimony_refusal(request.user, person, case) if can_testify else None
    roles = list(person.case_roles.filter(case=case))
    is_victim = bool(person.victim_status) or any(r.role == RoleKind.VICTIM for r in roles)
    return render(
        request,
        "people/person_detail.html",
        {
            "case": case,
            "person": person,
            "roles": roles,
            # Whoever registers people changes a victim's status (the missing app's
            # profile shows the same one, its history keeps each change).
            "status_form": (
                status_form or VictimStatusForm(initial={"victim_status": person.victim_status})
                if is_victim and can(request.user, Action.ADD_PEOPLE, case)
                else None
            ),
            "relations": relations,
            "consents": consents,
            "testimonies": reads.testimonies_listed_for(request.user, case).filter(witness=person),
            "identity": identity,
            "name_parts": (
                [(PART_LABELS[k], v) for k, v in identity.parts().items()] if identity else []
            ),
            # Who sees the names may correct them, in the same response (no reveal more).
            "names_form": (
                NamesForm(initial=NamesForm.initial_from(identity))
                if identity is not None and can(request.user, Action.ADD_PEOPLE, case)
                else None
            ),
            "reveal_form": reveal_form or (RevealForm() if can_reveal else None),
            "reveal_refusal": refusal,
            # Who changed the level, when and why: for who may reveal the person.
            "protection_changes": (
                person.protection_changes.select_related("changed_by") if can_reveal else None
            ),
            "protection_form": (
                ProtectionForm(levels=protection_levels, current=person.protection_level)
                if protection_levels
                else None
            ),
            "can_add": can(request.user, Action.ADD_PEOPLE, case),
            "can_consent": can_testify,
            "can_log_testimony": can_testify and testimony_refused is None,
            "testimony_refusal": testimony_refused,
            "can_view_case_audit": can(request.user, Action.VIEW_CASE_AUDIT, case),
            # A reveal found a sealed value that does not open for this person.
            "seal_broken": seal_broken or (identity is None and services.seal_failures(person)),
        },
        status=status,
    )


def person_detail(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    case, person = _person(request, ref, code)
    audit.record(request.user, "people.view", target=person, case=case)
    return _person_page(request, case, person)


def person_reveal(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    """Show the identity in this one response, once the stated reason is audited."""
    case, person = _person(request, ref, code, Action.REVEAL_IDENTITY)
    if reveal_refusal(request.user, person, case):
        audit.record(request.user, "people.reveal_refused", target=person, case=case)
        return _person_page(request, case, person, status=403)
    form = RevealForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            identity = services.reveal_identity(
                actor=account_of(request),
                case=case,
                person=person,
                reason=form.cleaned_data["reason"],
            )
        except ValidationError as exc:
            form_errors(form, exc)
        except services.SealedValueBroken:
            return _person_page(request, case, person, status=409, seal_broken=True)
        else:
            return _person_page(request, case, person, identity=identity)
    return _form_page(
        request,
        case,
        form,
        _("Reveal the identity of %s") % person.code,
        back=person.get_absolute_url(),
        intro=_("The reveal and your reason are written to the audit log."),
        submit=_("Reveal"),
        status=400 if form.errors else 200,
    )


def person_names(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    """Correct a person's names (full, aliases, in parts): a form shown with the revealed
    identity, so only its POST comes here. Audited without the names."""
    case, person = _person(request, ref, code, Action.REVEAL_IDENTITY)
    if request.method != "POST":  # after the case's 404: an outsider learns nothing
        return HttpResponseNotAllowed(["POST"])
    if refusal := reveal_refusal(request.user, person, case):
        raise PermissionDenied(refusal)
    form = NamesForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            changed = services.change_names(
                actor=account_of(request),
                case=case,
                person=person,
                name_ar=data["name_ar"],
                name_latin=data["name_latin"],
                aliases=data["aliases"],
                parts=form.parts(),
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            messages.success(
                request, _("Names changed.") if changed else _("The names were already so.")
            )
            return redirect(person.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("Names of %s") % person.code,
        back=person.get_absolute_url(),
        submit=_("Save the names"),
        status=400,
    )


def _record_protection_refusal(request, case, person, form) -> None:
    """A refused change of a protection level is a trace too, as a refused reveal is."""
    audit.record(
        request.user,
        "people.protection_change_refused",
        target=person,
        case=case,
        asked_level=str(form.data.get("level", ""))[:20],
    )


def person_status(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    """Change a victim's status (a form of the person page, so only its POST comes
    here); a rejected form comes back on the page with what was chosen."""
    case, person = _person(request, ref, code, Action.ADD_PEOPLE)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = VictimStatusForm(request.POST)
    if form.is_valid():
        try:
            changed = services.change_victim_status(
                actor=account_of(request),
                case=case,
                person=person,
                status=form.cleaned_data["victim_status"],
                reason=form.cleaned_data["reason"],
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            messages.success(
                request,
                _("Victim status changed.") if changed else _("The status was already so."),
            )
            return redirect(person.get_absolute_url())
    return _person_page(request, case, person, status=400, status_form=form)


def person_protection(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    """Raise or lower the person's protection level, through the service that audits it.
    A rejected form comes back with what was typed; a refusal says why (403)."""
    case, person = _person(request, ref, code, Action.REVEAL_IDENTITY)
    levels = _protection_levels(request, case, person)
    form = ProtectionForm(request.POST or None, levels=levels, current=person.protection_level)
    status = 200
    if request.method == "POST":
        status = 400
        if person.case_id != case.pk:
            form.full_clean()  # an unchecked form cannot take an error
            form.add_error(None, _protection_refusal(request, case, person))
            status = 403
            _record_protection_refusal(request, case, person, form)
        elif form.is_valid():
            try:
                change = services.change_protection(
                    actor=account_of(request),
                    person=person,
                    level=form.cleaned_data["level"],
                    reason=form.cleaned_data["reason"],
                )
            except PermissionDenied as exc:
                form.add_error(None, str(exc))
                status = 403
                _record_protection_refusal(request, case, person, form)
            except ValidationError as exc:
                form_errors(form, exc)
            else:
                messages.success(
                    request,
                    _("Protection level changed to %s.") % change.get_to_level_display(),
                )
                return redirect(person.get_absolute_url())
    elif not levels:
        # An old link or a second tab: say why, never show the form.
        messages.error(request, _protection_refusal(request, case, person))
        return redirect(person.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("Change the protection level of %s") % person.code,
        back=person.get_absolute_url(),
        intro=_(
            "Raising the level narrows who may reveal the identity; only the case lead "
            "lowers it. The change and your reason are written to the audit log."
        ),
        submit=_("Change the protection level"),
        status=status,
    )


@once.creates
def relation_create(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    case, person = _person(request, ref, code, Action.ADD_PEOPLE)
    others = _case_people(request.user, case).exclude(pk=person.pk)
    form = RelationForm(request.POST or None, people=others)
    if request.method == "POST" and form.is_valid():
        try:
            services.relate_people(
                actor=account_of(request),
                case=case,
                person=person,
                kind=form.cleaned_data["kind"],
                other=form.cleaned_data["other"],
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(person.get_absolute_url())
    return _form_page(
        request, case, form, _("%s is related to…") % person.code, back=person.get_absolute_url()
    )


@once.creates
def consent_create(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    case, person = _person(request, ref, code, Action.ADD_TESTIMONY)
    form = ConsentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.record_consent(
                actor=account_of(request), case=case, person=person, **form.cleaned_data
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(person.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("Consent given by %s") % person.code,
        back=person.get_absolute_url(),
        status=400 if form.errors else 200,
    )


def consent_withdraw(request: HttpRequest, ref: str, code: str, consent_id: int) -> HttpResponse:
    case, person = _person(request, ref, code, Action.ADD_TESTIMONY)
    consent = reads.get_consent_for_user(request.user, case, person, consent_id)
    form = WithdrawalForm(request.POST or None, in_force=services.consent_in_force(consent))
    if request.method == "POST" and form.is_valid():
        try:
            services.withdraw_consent(
                actor=account_of(request), consent=consent, **form.cleaned_data
            )
        except ValidationError as exc:
            form_errors(form, exc)
        else:
            return redirect(person.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("%(code)s withdraws consent of %(date)s")
        % {"code": person.code, "date": consent.given_on},
        back=person.get_absolute_url(),
        intro=_("The consent stays on record; the withdrawal is a new record."),
    )
