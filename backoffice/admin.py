"""Registers every model's admin; the admin's autodiscovery imports this module."""
from backoffice import access, findings, follow_ups, forge, reviews, verification  # noqa: F401
