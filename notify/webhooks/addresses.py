"""Where a webhook may be sent: checked as clone URLs are (engine.git.safety), when it is set and
again right before every attempt, so a name that resolves to an internal address by then (DNS
rebinding, a record changed since) is refused then. Redirects are never followed."""
import ipaddress
from urllib.parse import urlsplit

from django.conf import settings

from core.errors import RecheckError


class WebhookUrlRefused(RecheckError):
    pass


def webhook_url_check(url: str, *, resolve=None) -> str:
    """`url` as it may be recorded: https (http only to a host in RECHECK_WEBHOOK_INTERNAL_HOSTS),
    a host name or public address, no user part, and every address it resolves to now public."""
    webhook_url_addresses(url, resolve=resolve, strict=False)
    return url.strip()


def webhook_url_addresses(url: str, *, resolve=None, strict: bool = True) -> list[str]:
    """The addresses `url`'s host resolves to now, every one public (or the host named in
    RECHECK_WEBHOOK_INTERNAL_HOSTS); WebhookUrlRefused otherwise. Not `strict` (when it is set): a
    name that does not resolve yet is let through, and checked again when it is sent."""
    # The engine's git package is loaded by the writes and sends that check a URL, not by every
    # process that loads the apps' receivers (as reviews.services does).
    from engine.git import safety
    from engine.git.safety import host_is_allowed, internal_reason, literal_address

    url = url.strip()
    resolve = resolve or safety.resolve_host  # looked up now: a test stands in for DNS there
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WebhookUrlRefused(f"{url!r} is not a URL.") from None
    host = (parts.hostname or "").rstrip(".").lower()
    if parts.scheme not in ("https", "http") or not host:
        raise WebhookUrlRefused(f"{url!r}: give an https:// URL with a host name.")
    if parts.username or parts.password:
        raise WebhookUrlRefused(f"{url!r}: a webhook URL carries no user name or password; the signature "
                                "authenticates Recheck.")
    if any(ord(char) < 33 for char in url):
        raise WebhookUrlRefused(f"{url!r}: spaces and control characters are not allowed.")
    inside = host_is_allowed(host, settings.RECHECK_WEBHOOK_INTERNAL_HOSTS)
    if parts.scheme == "http" and not inside:
        raise WebhookUrlRefused(f"{url!r}: webhooks go over https (plain http only to a host named in "
                                "RECHECK_WEBHOOK_INTERNAL_HOSTS).")
    literal = literal_address(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = list(resolve(host, port or (443 if parts.scheme == "https" else 80)))
        except (OSError, UnicodeError):
            if strict:
                raise WebhookUrlRefused(f"The host of {url!r} does not resolve now; Recheck tries again later.") from None
            return []
    if inside:
        return addresses
    for text in addresses:
        reason = internal_reason(ipaddress.ip_address(text.split("%", 1)[0]))
        if reason:
            raise WebhookUrlRefused(f"{url!r}: its host {host} is {reason}; webhooks go to public addresses only "
                                    "(RECHECK_WEBHOOK_INTERNAL_HOSTS names the exceptions).")
    return addresses
