"""Review exchange: reading and writing reviews as bundles (the import format), SARIF and Markdown.

`review_export` is the one entry point the command, the API and the site use to export."""
from dataclasses import dataclass

from findings.exchange.bundle import bundle_dump, bundle_export
from findings.exchange.markdown import pull_request_markdown
from findings.exchange.sarif import pull_request_sarif, sarif_dump
from core.errors import RecheckError

EXPORT_FORMATS = ("bundle", "sarif", "markdown")


@dataclass(frozen=True)
class ExportResult:
    content: str
    content_type: str
    filename: str


def review_export(*, pull_request, format: str, reader=None) -> ExportResult:
    """`pull_request`'s review in `format` (bundle, sarif or markdown); for a `reader`, without
    the links to findings they may not read (only the bundle carries links)."""
    stem = f"{pull_request.repository.slug.replace('/', '-')}-{pull_request.number}"
    if format == "bundle":
        content = bundle_dump(bundle_export(pull_request=pull_request, reader=reader))
        return ExportResult(content, "application/yaml; charset=utf-8", f"{stem}.review.yaml")
    if format == "sarif":
        content = sarif_dump(pull_request_sarif(pull_request=pull_request))
        return ExportResult(content, "application/sarif+json", f"{stem}.sarif")
    if format == "markdown":
        content = pull_request_markdown(pull_request=pull_request)
        return ExportResult(content, "text/markdown; charset=utf-8", f"{stem}.md")
    raise RecheckError(f"Unknown export format {format!r}: use one of {', '.join(EXPORT_FORMATS)}.")
