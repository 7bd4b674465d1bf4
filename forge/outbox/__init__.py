"""The outbox: every call to a forge is a row (`ForgeCall`) written in the transaction that decided
it, sent when it is due by whichever sender claims it, tried again with backoff, and kept with the
forge's answer when it fails. It imports no forge: it asks `forge.interface` for the one it sends to."""
