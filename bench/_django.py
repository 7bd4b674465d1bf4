"""Set up Django for a benchmark: a throwaway SQLite database (or DATABASE_URL when given) and
mirror root, migrated, in a temporary directory."""
import os
import sys
import tempfile
from pathlib import Path


def setup(name: str, *, broker: bool = False) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"recheck-bench-{name}-"))
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "recheck.settings")
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{root / 'bench.sqlite3'}")
    os.environ["RECHECK_MIRROR_ROOT"] = str(root / "mirrors")
    os.environ["RECHECK_ALLOW_LOCAL_REPOSITORIES"] = "1"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    if not broker:
        os.environ.pop("CELERY_BROKER_URL", None)

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return root
