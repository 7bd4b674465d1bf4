"""The REST API (Django REST framework) for CI jobs, merge bots and scripts. An interface: it
imports the domain, and nothing imports it but the root URLconf."""
