"""The plain vocabulary every layer of Recheck shares: its error types, its words for what
verification found, the API token scopes and bounded reading of documents. Plain Python: no
Django, no Celery (an import-linter contract holds this)."""
