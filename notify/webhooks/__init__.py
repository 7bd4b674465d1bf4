"""Outgoing webhooks: where they may go (`addresses`), how they are signed (`signing`), what they
say (`payloads`), what an Admin sets (`services`), and how they are sent (`sending`, `wake`)."""
