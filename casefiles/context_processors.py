from .access import led_case_ids, request_is_system_admin


def navigation(request):
    """What the header may offer this user (two queries when signed in)."""
    user = getattr(request, "user", None)
    if not (user and user.is_authenticated):
        return {"show_audit_link": False, "show_manage": False, "show_requests": False}
    admin = request_is_system_admin(request)  # the whole audit log is for system admins only
    return {
        "show_audit_link": admin,
        "show_manage": admin,
        "show_requests": admin or led_case_ids(user).exists(),
    }
