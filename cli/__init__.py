"""The management commands (`manage.py verify`, `import_review`, ...) and the demo data. An
interface: it imports the domain, and nothing imports it."""
