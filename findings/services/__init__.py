"""Writes about findings, each service owning its rules and taking the acting user."""
