"""What a webhook says: a Standard Webhooks body (`type`, `timestamp`, `data`) with the message's
events, or for the chat preset a Slack-compatible incoming-webhook body (`text` and `blocks`),
which Slack, Mattermost and Rocket.Chat accept."""
import json

from django.conf import settings

from core.vocabulary import events as ev
from presentation.events import event_data, summarised

# A chat message lists at most this many events, then says how many more: a push that moved
# 5,000 verdicts is one readable message, with the link to the rest.
CHAT_LISTED = 20


def message_body(message, events) -> str:
    """The body of `message` (a WebhookMessage) with `events` (its ReviewEvents, in order): JSON
    text, compact, exactly what is signed."""
    site = settings.RECHECK_SITE_URL
    events = summarised(events)
    pull_request = message.pull_request
    data = {
        "repository": message.endpoint.repository.slug,
        "pull_request": {"number": pull_request.number, "title": pull_request.title,
                         "url": f"{site}{pull_request.get_absolute_url()}"} if pull_request else None,
        "events": [event_data(event, site_url=site) for event in events],
    }
    if message.endpoint.preset == "chat":
        body = chat_body(message, data)
    else:
        body = {"type": message.kind, "timestamp": message.created_at.isoformat().replace("+00:00", "Z"), "data": data}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def chat_body(message, data: dict) -> dict:
    where = data["repository"]
    if data["pull_request"]:
        where = f"{where}#{data['pull_request']['number']}"
        if data["pull_request"]["url"].startswith("http"):  # a link only where the site's address is known
            where = f"<{data['pull_request']['url']}|{where}>"
    count = len(data["events"])
    heading = f"{where}: {ev.event_kind_label(message.kind)}" + (f" ({count})" if count > 1 else "")
    lines = [f"• {event['summary']}" for event in data["events"][:CHAT_LISTED]]
    if count > CHAT_LISTED:
        lines.append(f"… and {count - CHAT_LISTED} more on the timeline.")
    text = "\n".join([heading, *lines])
    return {
        "text": text,
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{heading}*"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)[:2900]}},
        ],
    }
