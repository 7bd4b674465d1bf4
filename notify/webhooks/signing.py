"""Signing a webhook as the Standard Webhooks specification says, with its reference
implementation (`standardwebhooks`): `webhook-signature` is `v1,<base64 HMAC-SHA256 of
"id.timestamp.body">`, one for each secret the endpoint holds, space-separated, so a receiver
verifies with whichever it has while a secret is being rotated."""
import base64
import secrets as random_secrets
from datetime import datetime

from standardwebhooks import Webhook


def webhook_secret_new() -> str:
    """A new secret, `whsec_` and 24 random bytes in base64, as the specification writes them."""
    return "whsec_" + base64.b64encode(random_secrets.token_bytes(24)).decode()


def signed_headers(*, message_id: str, timestamp: datetime, body: str, secrets: list[str]) -> dict[str, str]:
    signatures = [Webhook(secret).sign(message_id, timestamp, body) for secret in secrets]
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": " ".join(signatures),
        "content-type": "application/json",
        "user-agent": "Recheck-Webhooks/1",
    }
