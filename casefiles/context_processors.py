from .access import Action, can


def navigation(request):
    """What the header may offer this user."""
    user = getattr(request, "user", None)
    return {"show_audit_link": bool(user and can(user, Action.VIEW_AUDIT))}
