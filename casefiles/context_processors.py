from .access import Action, can, is_system_admin, led_case_ids


def navigation(request):
    """What the header may offer this user."""
    user = getattr(request, "user", None)
    if not (user and user.is_authenticated):
        return {"show_audit_link": False, "show_manage": False, "show_requests": False}
    admin = is_system_admin(user)
    return {
        "show_audit_link": bool(can(user, Action.VIEW_AUDIT)),
        "show_manage": admin,
        "show_requests": admin or led_case_ids(user).exists(),
    }
