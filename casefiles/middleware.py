from django.utils.cache import add_never_cache_headers

from .audit import RequestContext, reset_request_context, set_request_context
from .netaddr import client_ip


class RequestContextMiddleware:
    """Make the client's address and user agent available to audit entries."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # The same address the lockout uses: REMOTE_ADDR unless a trusted proxy sent it.
        token = set_request_context(
            RequestContext(
                ip=client_ip(request),
                user_agent=request.META.get("HTTP_USER_AGENT", ""),
            )
        )
        try:
            return self.get_response(request)
        finally:
            reset_request_context(token)


class NoStoreMiddleware:
    """Case data must not linger in browser or proxy caches: no page is stored."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        add_never_cache_headers(response)
        return response
