"""An item's graphic content: marked or unmarked from its page, and revealed there."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.utils.translation import gettext as _

from casefiles import audit
from casefiles.access import account_of

from . import graphic, services
from .views import _item, _withheld


def mark_graphic(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    """Mark the item graphic (``graphic=1``) or no longer (``graphic=0``)."""
    case, item = _item(request, ref, item_ref)  # first: to an outsider, no such item
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if refused := _withheld(request, case, item, "graphic"):
        return refused  # judging what it shows means having seen it
    if not services.may_mark_graphic(account_of(request), case):
        raise PermissionDenied
    marked = request.POST.get("graphic") == "1"
    if services.set_graphic(actor=account_of(request), case=case, items=[item], graphic=marked):
        if marked:
            graphic.forget_reveal(request, item.pk)  # a reveal made before does not carry over
            messages.success(request, _("Marked graphic: shown blurred until revealed."))
        else:
            messages.success(request, _("No longer marked graphic."))
    return redirect(item)


def reveal(request: HttpRequest, ref: str, item_ref: str) -> HttpResponse:
    """Show this user the graphic item's real picture, for a while: audited."""
    case, item = _item(request, ref, item_ref)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if refused := _withheld(request, case, item, "reveal"):
        return refused
    if item.is_graphic:
        audit.record(
            request.user,
            "evidence.graphic_reveal",
            target=item,
            case=case,
            minutes=graphic.REVEAL_SECONDS // 60,
        )
        graphic.remember_reveal(request, item.pk)
    return redirect(f"{item.get_absolute_url()}#picture")
