"""The Django admin: every model's admin, recorded in the audit log. An interface: it imports the
domain through the same services as the site and the API, and nothing imports it (the admin's
autodiscovery loads `backoffice.admin`)."""
