"""The database objects behind the search, per vendor: created by migration 0010, and checked again
after every migrate because SQLite drops a table's triggers when Django rebuilds the table (which
it does to alter a column)."""

POSTGRESQL_INSTALL = [
    "ALTER TABLE findings_finding ADD COLUMN IF NOT EXISTS search_vector tsvector NOT NULL DEFAULT ''::tsvector",
    # Both indexes split text at anything but letters and digits: `nemo_rl/data/module_5.py` is the
    # words nemo rl data module 5 py (PostgreSQL's parser alone would keep it as one file token).
    """CREATE OR REPLACE FUNCTION findings_search_words(value text) RETURNS text
       LANGUAGE sql IMMUTABLE PARALLEL SAFE
       AS $$ SELECT regexp_replace(coalesce(value, ''), '[^[:alnum:]]+', ' ', 'g') $$""",
    """CREATE OR REPLACE FUNCTION findings_finding_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE
         evidence_paths text;
         evidence_captions text;
       BEGIN
         SELECT string_agg(path, ' '), string_agg(caption, ' ') INTO evidence_paths, evidence_captions
           FROM findings_evidence WHERE finding_id = NEW.id;
         NEW.search_vector :=
              setweight(to_tsvector('english', findings_search_words(NEW.title)), 'A')
           || setweight(to_tsvector('english', findings_search_words(NEW.summary)), 'B')
           || setweight(to_tsvector('english', findings_search_words(concat_ws(' ', NEW.path, evidence_paths))), 'B')
           || setweight(to_tsvector('english',
                findings_search_words(concat_ws(' ', NEW.body, NEW.fix, evidence_captions))), 'C');
         RETURN NEW;
       END $$""",
    """CREATE OR REPLACE FUNCTION findings_evidence_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         -- Touching the finding's title runs its trigger, which reads the evidence afresh.
         IF TG_OP <> 'INSERT' THEN
           UPDATE findings_finding SET title = title WHERE id = OLD.finding_id;
         END IF;
         IF TG_OP = 'INSERT' THEN
           UPDATE findings_finding SET title = title WHERE id = NEW.finding_id;
         ELSIF TG_OP = 'UPDATE' AND NEW.finding_id <> OLD.finding_id THEN
           UPDATE findings_finding SET title = title WHERE id = NEW.finding_id;
         END IF;
         RETURN NULL;
       END $$""",
    "DROP TRIGGER IF EXISTS findings_finding_search_vector ON findings_finding",
    """CREATE TRIGGER findings_finding_search_vector
       BEFORE INSERT OR UPDATE OF title, summary, body, fix, path ON findings_finding
       FOR EACH ROW EXECUTE FUNCTION findings_finding_search_vector()""",
    "DROP TRIGGER IF EXISTS findings_evidence_search_vector ON findings_evidence",
    """CREATE TRIGGER findings_evidence_search_vector
       AFTER INSERT OR UPDATE OF path, caption, finding_id OR DELETE ON findings_evidence
       FOR EACH ROW EXECUTE FUNCTION findings_evidence_search_vector()""",
    "CREATE INDEX IF NOT EXISTS finding_search_vector_gin ON findings_finding USING gin (search_vector)",
    # Similar titles for related findings (pg_trgm, created by the same migration).
    "CREATE INDEX IF NOT EXISTS finding_title_trgm ON findings_finding USING gin (title gin_trgm_ops)",
]
POSTGRESQL_BACKFILL = ["UPDATE findings_finding SET title = title"]
POSTGRESQL_UNINSTALL = [
    "DROP INDEX IF EXISTS finding_title_trgm",
    "DROP TRIGGER IF EXISTS findings_evidence_search_vector ON findings_evidence",
    "DROP TRIGGER IF EXISTS findings_finding_search_vector ON findings_finding",
    "DROP FUNCTION IF EXISTS findings_evidence_search_vector()",
    "DROP FUNCTION IF EXISTS findings_finding_search_vector()",
    "DROP FUNCTION IF EXISTS findings_search_words(text)",
    "ALTER TABLE findings_finding DROP COLUMN IF EXISTS search_vector",
]


def _sqlite_refresh(finding_id: str) -> str:
    """The statements that rewrite one finding's row of the FTS5 table from the tables."""
    return f"""
      DELETE FROM findings_finding_search WHERE rowid = {finding_id};
      INSERT INTO findings_finding_search(rowid, title, summary, body, fix, paths, captions)
        SELECT f.id, f.title, f.summary, f.body, f.fix,
               f.path || ' ' || coalesce((SELECT group_concat(e.path, ' ') FROM findings_evidence e
                                          WHERE e.finding_id = f.id), ''),
               coalesce((SELECT group_concat(e.caption, ' ') FROM findings_evidence e WHERE e.finding_id = f.id), '')
          FROM findings_finding f WHERE f.id = {finding_id};"""


SQLITE_INSTALL = [
    """CREATE VIRTUAL TABLE IF NOT EXISTS findings_finding_search USING fts5(
         title, summary, body, fix, paths, captions, tokenize = 'porter unicode61 remove_diacritics 2')""",
    "CREATE TRIGGER IF NOT EXISTS findings_finding_search_insert AFTER INSERT ON findings_finding BEGIN"
    f"{_sqlite_refresh('NEW.id')} END",
    "CREATE TRIGGER IF NOT EXISTS findings_finding_search_update "
    "AFTER UPDATE OF title, summary, body, fix, path ON findings_finding BEGIN"
    f"{_sqlite_refresh('NEW.id')} END",
    "CREATE TRIGGER IF NOT EXISTS findings_finding_search_delete AFTER DELETE ON findings_finding BEGIN "
    "DELETE FROM findings_finding_search WHERE rowid = OLD.id; END",
    "CREATE TRIGGER IF NOT EXISTS findings_evidence_search_insert AFTER INSERT ON findings_evidence BEGIN"
    f"{_sqlite_refresh('NEW.finding_id')} END",
    "CREATE TRIGGER IF NOT EXISTS findings_evidence_search_update "
    "AFTER UPDATE OF path, caption, finding_id ON findings_evidence BEGIN"
    f"{_sqlite_refresh('OLD.finding_id')}{_sqlite_refresh('NEW.finding_id')} END",
    "CREATE TRIGGER IF NOT EXISTS findings_evidence_search_delete AFTER DELETE ON findings_evidence BEGIN"
    f"{_sqlite_refresh('OLD.finding_id')} END",
]
SQLITE_BACKFILL = [
    "DELETE FROM findings_finding_search",
    """INSERT INTO findings_finding_search(rowid, title, summary, body, fix, paths, captions)
       SELECT f.id, f.title, f.summary, f.body, f.fix,
              f.path || ' ' || coalesce((SELECT group_concat(e.path, ' ') FROM findings_evidence e
                                         WHERE e.finding_id = f.id), ''),
              coalesce((SELECT group_concat(e.caption, ' ') FROM findings_evidence e WHERE e.finding_id = f.id), '')
         FROM findings_finding f""",
]
SQLITE_UNINSTALL = [
    *(
        f"DROP TRIGGER IF EXISTS {name}"
        for name in (
            "findings_finding_search_insert", "findings_finding_search_update", "findings_finding_search_delete",
            "findings_evidence_search_insert", "findings_evidence_search_update", "findings_evidence_search_delete",
        )
    ),
    "DROP TABLE IF EXISTS findings_finding_search",
]


def _statements(vendor: str, *, install: bool, backfill: bool) -> list[str]:
    if vendor == "postgresql":
        return (POSTGRESQL_INSTALL + (POSTGRESQL_BACKFILL if backfill else [])) if install else POSTGRESQL_UNINSTALL
    if vendor == "sqlite":
        return (SQLITE_INSTALL + (SQLITE_BACKFILL if backfill else [])) if install else SQLITE_UNINSTALL
    raise NotImplementedError(f"Recheck's search supports PostgreSQL and SQLite, not {vendor}.")


def search_index_install(connection, *, backfill: bool = True) -> None:
    with connection.cursor() as cursor:
        for statement in _statements(connection.vendor, install=True, backfill=backfill):
            cursor.execute(statement)


def search_index_uninstall(connection) -> None:
    with connection.cursor() as cursor:
        for statement in _statements(connection.vendor, install=False, backfill=False):
            cursor.execute(statement)


def search_index_repair(connection) -> None:
    """Recreate on SQLite the triggers a table rebuild dropped, and refill the index if any was
    missing (rows written meanwhile were not indexed)."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'findings_finding'")
        if not cursor.fetchone()[0]:
            return
        cursor.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'findings_%_search_%'")
        if cursor.fetchone()[0] == 6:
            return
    search_index_install(connection, backfill=True)
    # What a search answers changed (rows written while a trigger was missing are found now):
    # every answer kept by a pull request's generation (the site's search among them) moves past.
    from reviews.models import PullRequest

    with connection.cursor() as cursor:
        cursor.execute(f'UPDATE {connection.ops.quote_name(PullRequest._meta.db_table)} '
                       'SET "generation" = "generation" + 1')
