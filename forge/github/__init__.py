"""GitHub: its client and the App's authentication, the webhook deliveries, its verdict's rows, what
each call does there, its review threads at the wire, and the `Forge` it registers (`integration`).
Nothing here is imported by `forge.gitlab`, nor by the outbox or the threads, which reach GitHub
through `forge.interface`."""
