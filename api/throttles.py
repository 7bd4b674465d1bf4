from rest_framework.settings import api_settings
from rest_framework.throttling import UserRateThrottle


class WriteThrottle(UserRateThrottle):
    """Limits API writes per user at the "writes" rate (RECHECK_WRITE_THROTTLE, e.g. 120/min).

    DRF copies the rates into the class when it is defined; reading them per request instead lets
    a changed setting (or a test's `settings` fixture) take effect. Counts live in the default
    cache, so each process counts separately unless CACHES points at a shared cache."""

    scope = "writes"

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES[self.scope]

    def allow_request(self, request, view):
        # Reads never count against the write budget.
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return super().allow_request(request, view)
