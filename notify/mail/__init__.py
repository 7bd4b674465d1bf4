"""Email: who is sent what (`recipients`: subscriptions, and by default the people who recorded or
decided a pull request's findings), the subscriptions and their one-click unsubscribe
(`services`), and the batched messages, sent through Django's mail framework (`sending`)."""
