"""What accounts adds to the home page of an admin in no case: the resets to decide."""

from casefiles.panels import render_snippet

from .models import SecondFactorReset


def pending_resets(context):
    """The ``admin_home`` panel: the first pending resets, and whether there are more
    (one query)."""
    from casefiles.views import HOME_SHOWN

    rows = list(
        SecondFactorReset.objects.filter(outcome=SecondFactorReset.Outcome.PENDING)
        .select_related("user", "requested_by")
        .order_by("requested_at")[: HOME_SHOWN + 1]
    )
    return render_snippet(
        context,
        "accounts/snippets/_home_resets.html",
        {
            "request": context.get("request"),
            "resets": rows[:HOME_SHOWN],
            "more_resets": len(rows) > HOME_SHOWN,
        },
    )
