"""One submission, once: the same create form sent twice makes one record.

Every form that creates a record carries a random one-time token (``{% once_token %}``,
from ``casefiles/templatetags/once.py``, in a hidden field named ``FIELD``). A create
view is wrapped in ``@creates``:

- a POST whose token this account already spent creates nothing: it goes back to what
  the first one made, with "This was already saved";
- otherwise the view runs with the token *claimed*: the first audit entry the write
  appends spends it (a ``Submission`` row, written by the audit follower ``spend`` in the
  service's own transaction), so the record, its audit entry and the spent token commit
  or roll back together. A refusal (a validation error) writes nothing, and the form
  comes back carrying the same token, so the corrected form is saved;
- two POSTs of one token at once: the token is unique, the second write fails on it and
  is rolled back, and that POST goes to the first one's result like any repeat;
- a POST without a (well-formed) token, from a page older than this guard, is refused
  with a validation error in the service's transaction: the form comes back with what
  was typed and a fresh token.

The page the first POST went to (its redirect) is stored on the row right after the
write commits; if that is lost (the process dies in between), a repeat goes to the case.
See docs/decisions/0026-one-submission-once.md.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import wraps

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _

from .models import AuditEntry, Submission

FIELD = "once"
_WELL_FORMED = re.compile(r"[A-Za-z0-9_-]{32}")
# The request attribute through which a re-rendered form keeps the token it was sent with.
_REUSE = "_once_reuse"


def new_token() -> str:
    return secrets.token_urlsafe(24)  # 32 characters


def well_formed(token: str) -> bool:
    return _WELL_FORMED.fullmatch(token) is not None


def posted_token(request: HttpRequest) -> str | None:
    token = request.POST.get(FIELD, "")
    return token if well_formed(token) else None


def token_for_form(request: HttpRequest | None) -> str:
    """The token a form on this page carries: the one it was posted with when a create
    view shows it again (refused, so not spent), else a fresh one. Taken once per
    request: a second form on the same page gets its own."""
    if request is not None and (token := getattr(request, _REUSE, None)):
        setattr(request, _REUSE, None)
        return token
    return new_token()


class AlreadySaved(Exception):
    """Raised inside a write whose token another request spent meanwhile."""


@dataclass
class _Claim:
    account_id: int
    token: str | None  # None: the POST had no usable token, so the write is refused
    submission: Submission | None = None


_claim: ContextVar[_Claim | None] = ContextVar("athar_once_claim", default=None)


@contextmanager
def claimed(account_id: int, token: str | None) -> Iterator[_Claim]:
    """While the block runs, the first audit entry appended spends ``token`` for the
    account (or, with no token, refuses the write)."""
    claim = _Claim(account_id, token)
    bound = _claim.set(claim)
    try:
        yield claim
    finally:
        _claim.reset(bound)


def spend(entry: AuditEntry) -> None:
    """Audit follower: the first entry a claimed write appends spends its token, in the
    same transaction (so it commits or rolls back with the record)."""
    claim = _claim.get()
    if claim is None or claim.submission is not None:
        return
    if claim.token is None:
        raise ValidationError(_missing_message())
    try:
        with transaction.atomic():
            claim.submission = Submission.objects.create(
                account_id=claim.account_id, token=claim.token, entry=entry
            )
    except IntegrityError as exc:
        raise AlreadySaved(claim.token) from exc


def _missing_message() -> str:
    return _("This form came from an old page and was not saved. Check it and send it again.")


def _already_saved(request: HttpRequest, submission: Submission) -> HttpResponse:
    messages.info(request, _("This was already saved."))
    if submission.result_url:
        return redirect(submission.result_url)
    # The write committed but its page was not noted (the process stopped in between).
    case = submission.entry.case if submission.entry is not None else None
    if case is not None:
        return redirect(reverse("casefiles:case_detail", args=[case.reference]))
    return redirect("home")


def creates(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Mark ``view`` as one that creates a record on POST, and make that POST count once
    per token (see the module's docstring). ``is_create_view`` finds such views."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method != "POST" or not request.user.is_authenticated:
            return view(request, *args, **kwargs)
        account_id = request.user.pk
        token = posted_token(request)
        if token is not None:
            earlier = Submission.objects.filter(token=token).select_related("entry").first()
            if earlier is not None and earlier.account_id == account_id:
                return _already_saved(request, earlier)
            if earlier is not None:
                token = None  # someone else's: not this form's, so refused like none
        setattr(request, _REUSE, token)
        try:
            with claimed(account_id, token) as claim:
                response = view(request, *args, **kwargs)
        except AlreadySaved:
            found = Submission.objects.select_related("entry").get(token=token)
            return _already_saved(request, found)
        spent = claim.submission
        if spent is not None:
            if 300 <= response.status_code < 400:
                spent.result_url = response["Location"]
                Submission.objects.filter(pk=spent.pk).update(result_url=spent.result_url)
            else:
                # A refusal the service audits in its own transaction, then the form again:
                # nothing was created, so the token stays usable.
                Submission.objects.filter(pk=spent.pk).delete()
        return response

    wrapped.creates_once = True  # type: ignore[attr-defined]
    return wrapped


def is_create_view(callback: object) -> bool:
    return getattr(callback, "creates_once", False) is True
