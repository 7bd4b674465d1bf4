"""Telling people what changed in a review: outgoing webhooks signed as Standard Webhooks says,
sent from an outbox (`notify.webhooks`), and the chat preset's bodies. It listens to the domain's
`findings.signals.events_recorded`, writes what is to be delivered in the same transaction as the
events, and sends it from a worker (decision record 0027)."""
