"""The verification engine: reading git repositories (`engine.git`) and checking evidence against
a commit (`engine.verification`). Plain Python on the git command line: no Django, no Celery
(an import-linter contract holds this), so it is tested and benchmarked on its own."""
