"""Pages of people, consent and testimony. Each view finds the case through the access
policy (404 for non-members), validates a form, calls one service and redirects.

No view but ``person_reveal`` opens an identity, and that one only after the reveal has
been audited; the identity goes into that one response and nowhere else.
"""

import csv

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch, Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import Action, account_of, can, get_case_for_user
from casefiles.exports import csv_cell

from . import services
from .filters import CaseRoleFilter
from .forms import (
    ConsentForm,
    DecisionForm,
    NameLookupForm,
    PersonForm,
    ProtectionForm,
    RelationForm,
    RevealForm,
    TestimonyForm,
    VersionForm,
    WithdrawalForm,
)
from .models import CaseRole, Consent, ConsentScope, Person, Relation, Testimony
from .protection import (
    protection_change_refusal,
    protection_levels_for,
    reveal_refusal,
    statement_refusal,
    testimony_refusal,
)


def _case_people(user, case):
    in_case = CaseRole.objects.visible_to(user).filter(case=case).values("person_id")
    return Person.objects.visible_to(user).filter(pk__in=in_case)


def _person(request, ref, code, action=Action.VIEW_CASE):
    case = get_case_for_user(request.user, ref, action)
    person = get_object_or_404(_case_people(request.user, case), code=code)
    if person.case_id == case.pk:
        person.case = case
    return case, person


def _testimony(request, ref, testimony_id, action=Action.VIEW_CASE):
    case = get_case_for_user(request.user, ref, action)
    testimonies = Testimony.objects.visible_to(request.user).filter(case=case)
    testimony = get_object_or_404(testimonies.select_related("witness"), pk=testimony_id)
    testimony.case = case  # the one carrying the viewer's role: no query per can()
    return case, testimony


def _form_errors(form, exc: ValidationError) -> None:
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc)


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


def people_list(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref)
    roles = CaseRole.objects.visible_to(request.user).filter(case=case).select_related("person")
    filterset = CaseRoleFilter(request.GET, queryset=roles.order_by("person__code", "role"))
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
            visible_roles = CaseRole.objects.visible_to(request.user).filter(person__in=matches)
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
            "roles": filterset.qs,
            "filtered": any(request.GET.values()),
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
        CaseRole.objects.visible_to(request.user)
        .filter(case=case)
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
        "detainee_number",
        "detention_branch",
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
                p.detainee_number,
                p.detention_branch,
            ]
        )
        rows += 1
    audit.record(request.user, "people.export", case=case, rows=rows)
    return response


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
            _form_errors(form, exc)
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


def _person_page(request, case, person, identity=None, reveal_form=None, status=200):
    relations = (
        Relation.objects.visible_to(request.user)
        .filter(Q(person=person) | Q(other=person), case=case)
        .select_related("person", "other")
    )
    consents = list(
        Consent.objects.visible_to(request.user)
        .filter(person=person, case=case)
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
    return render(
        request,
        "people/person_detail.html",
        {
            "case": case,
            "person": person,
            "roles": person.case_roles.filter(case=case),
            "relations": relations,
            "consents": consents,
            "testimonies": Testimony.objects.visible_to(request.user).filter(
                case=case, witness=person
            ),
            "identity": identity,
            "reveal_form": reveal_form or (RevealForm() if can_reveal else None),
            "reveal_refusal": refusal,
            # Who changed the level, when and why: for who may reveal the person.
            "protection_changes": (
                person.protection_changes.select_related("changed_by") if can_reveal else None
            ),
            "protection_form": (
                ProtectionForm(levels=protection_levels) if protection_levels else None
            ),
            "can_add": can(request.user, Action.ADD_PEOPLE, case),
            "can_consent": can_testify,
            "can_log_testimony": can_testify and testimony_refused is None,
            "testimony_refusal": testimony_refused,
            "can_view_case_audit": can(request.user, Action.VIEW_CASE_AUDIT, case),
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
            _form_errors(form, exc)
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


def _record_protection_refusal(request, case, person, form) -> None:
    """A refused change of a protection level is a trace too, as a refused reveal is."""
    audit.record(
        request.user,
        "people.protection_change_refused",
        target=person,
        case=case,
        asked_level=str(form.data.get("level", ""))[:20],
    )


def person_protection(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    """Raise or lower the person's protection level, through the service that audits it.
    A rejected form comes back with what was typed; a refusal says why (403)."""
    case, person = _person(request, ref, code, Action.REVEAL_IDENTITY)
    levels = _protection_levels(request, case, person)
    form = ProtectionForm(request.POST or None, levels=levels)
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
                _form_errors(form, exc)
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
            _form_errors(form, exc)
        else:
            return redirect(person.get_absolute_url())
    return _form_page(
        request, case, form, _("%s is related to…") % person.code, back=person.get_absolute_url()
    )


def consent_create(request: HttpRequest, ref: str, code: str) -> HttpResponse:
    case, person = _person(request, ref, code, Action.ADD_TESTIMONY)
    form = ConsentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.record_consent(
                actor=account_of(request), case=case, person=person, **form.cleaned_data
            )
        except ValidationError as exc:
            _form_errors(form, exc)
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
    consent = get_object_or_404(
        Consent.objects.visible_to(request.user).filter(case=case, person=person, kind="grant"),
        pk=consent_id,
    )
    form = WithdrawalForm(request.POST or None, in_force=services.consent_in_force(consent))
    if request.method == "POST" and form.is_valid():
        try:
            services.withdraw_consent(
                actor=account_of(request), consent=consent, **form.cleaned_data
            )
        except ValidationError as exc:
            _form_errors(form, exc)
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


def testimony_create(request: HttpRequest, ref: str) -> HttpResponse:
    case = get_case_for_user(request.user, ref, Action.ADD_TESTIMONY)
    people = _case_people(request.user, case).order_by("code")
    form = TestimonyForm(
        request.POST or None,
        case=case,
        people=people,
        user=account_of(request),
        initial={"witness": request.GET.get("witness", "")},
    )
    if request.method == "POST" and form.is_valid():
        try:
            testimony = services.create_testimony(
                actor=account_of(request), case=case, **form.cleaned_data
            )
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            return redirect(testimony.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("Log a testimony"),
        back=f"/cases/{case.reference}/people/",
        status=400 if form.errors else 200,
    )


def _version_number(value, default):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _testimony_page(request, case, testimony, status=200):
    """The testimony page. Its statement, changes, version reasons and review comments
    only for who may read the statement (``statement_refusal``); every view is audited,
    naming the version read or that the statement was withheld."""
    refusal = statement_refusal(request.user, testimony.witness, case)
    versions = list(testimony.versions.select_related("author").order_by("number"))
    by_number = {v.number: v for v in versions}
    last = versions[-1].number
    new = by_number.get(_version_number(request.GET.get("b"), last), versions[-1])
    old = by_number.get(_version_number(request.GET.get("a"), new.number - 1))
    if refusal:
        new, old = versions[-1], None
        audit.record(request.user, "testimony.view", target=testimony, case=case, withheld=True)
    else:
        audit.record(
            request.user, "testimony.view", target=testimony, case=case, version=new.number
        )
    targets = services.allowed_transitions(account_of(request), testimony)
    purposes = [p for p in ConsentScope.values if p != ConsentScope.SHARING]
    answers = services.sharing_answers(testimony=testimony, purposes=purposes)
    consent = {str(ConsentScope(p).label): answers[p] for p in purposes}
    return render(
        request,
        "people/testimony_detail.html",
        {
            "case": case,
            "testimony": testimony,
            "versions": versions,
            "shown": new,
            "compared": old,
            "statement_refusal": refusal,
            "diff": services.diff_versions(old, new) if old else None,
            "decisions": testimony.decisions.select_related("actor"),
            "decision_form": DecisionForm(targets=targets) if targets else None,
            "can_revise": (
                not refusal and testimony.editable and can(request.user, Action.ADD_TESTIMONY, case)
            ),
            "consent": consent,
        },
        status=status,
    )


def testimony_detail(request: HttpRequest, ref: str, testimony_id: int) -> HttpResponse:
    case, testimony = _testimony(request, ref, testimony_id)
    return _testimony_page(request, case, testimony)


def version_create(request: HttpRequest, ref: str, testimony_id: int) -> HttpResponse:
    """The form for a new version, filled with the statement as it stands: a read of the
    statement, kept to who may read it and audited as one."""
    case, testimony = _testimony(request, ref, testimony_id, Action.ADD_TESTIMONY)
    if statement_refusal(request.user, testimony.witness, case):
        return _testimony_page(request, case, testimony, status=403)
    closed = _(
        "This testimony is %(status)s: only a draft or a returned testimony takes a new version."
    ) % {"status": testimony.get_status_display().lower()}
    if request.method != "POST":
        if not testimony.editable:
            # An old link or a second tab: say why, never show the form.
            messages.error(request, closed)
            return redirect(testimony.get_absolute_url())
        head = testimony.versions.order_by("-number").first()
        audit.record(
            request.user,
            "testimony.view",
            target=testimony,
            case=case,
            version=head.number,
            for_revision=True,
        )
        form = VersionForm(initial={"text": head.text})
        status = 200
    else:
        form = VersionForm(request.POST)
        status = 400
        if not testimony.editable:
            # Submitted meanwhile: keep what was typed, and say why it was not saved.
            form.full_clean()  # an unchecked form cannot take an error
            form.add_error(None, closed)
            status = 409
        elif form.is_valid():
            try:
                services.revise_testimony(
                    actor=account_of(request), testimony=testimony, **form.cleaned_data
                )
            except ValidationError as exc:
                _form_errors(form, exc)
            else:
                return redirect(testimony.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("New version of %s") % testimony,
        back=testimony.get_absolute_url(),
        intro=_("Earlier versions are kept as they are; say why the statement changes."),
        status=status,
    )


def testimony_decide(request: HttpRequest, ref: str, testimony_id: int) -> HttpResponse:
    case, testimony = _testimony(request, ref, testimony_id)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    targets = services.allowed_transitions(account_of(request), testimony)
    form = DecisionForm(request.POST, targets=targets)
    if form.is_valid():
        try:
            services.decide_testimony(
                actor=account_of(request), testimony=testimony, **form.cleaned_data
            )
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            return redirect(testimony.get_absolute_url())
    return _form_page(
        request,
        case,
        form,
        _("Decision on %s") % testimony,
        back=testimony.get_absolute_url(),
        status=400,
    )
