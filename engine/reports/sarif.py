"""A SARIF 2.1.0 log's results, validated against the OASIS schema vendored beside this module,
with each result's file made relative to the repository as GitHub's code scanning upload does."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import jsonschema

from core.documents import DocumentError, load_json
from core.errors import RecheckError, ReportError
from engine.git.safety import validate_repo_path
from engine.reports import ScanResult, Tally

# The official schema (errata01), as OASIS publishes it.
SARIF_SCHEMA_PATH = Path(__file__).with_name("sarif-schema-2.1.0.json")
MAX_MESSAGE = 1000
# SARIF's own default level for a result that gives none.
DEFAULT_LEVEL = "warning"


@cache
def _validator() -> jsonschema.Draft7Validator:
    # The schema declares draft-04, whose rules SARIF's uses read the same under Draft 7.
    return jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA_PATH.read_text()))


def sarif_results(body: bytes, tally: Tally, *, place: Callable[[str], str | None]) -> list[ScanResult]:
    """The results of the SARIF log ``body``, counted in ``tally``.

    ``place`` turns a result's file (its URI made a path: absolute as the tool wrote it, or
    relative) into a path in the repository, or None when it names no file there. Raises
    ReportError for JSON that does not parse, a log the schema refuses (naming where), and a
    result whose file is outside the repository (naming the result)."""
    try:
        log = load_json(body)
    except DocumentError as error:
        raise ReportError("file", str(error)) from None
    errors = sorted(_validator().iter_errors(log), key=lambda error: list(error.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        where = _json_path(error.absolute_path) or "the log"
        raise ReportError("file", f"Not a valid SARIF 2.1.0 log: at {where}, {error.message[:300]}.")
    results: list[ScanResult] = []
    tools = []
    for run_index, run in enumerate(log["runs"]):
        tools.append(run["tool"]["driver"]["name"])
        bases = run.get("originalUriBaseIds") or {}
        for index, result in enumerate(run.get("results") or []):
            results.append(_result(result, bases, place, f"runs[{run_index}].results[{index}]"))
    tally.results = len(results)
    tally.tool = ", ".join(dict.fromkeys(tools))
    return results


def _result(result: dict, bases: dict, place, where: str) -> ScanResult:
    rule = result.get("ruleId") or (result.get("rule") or {}).get("id") or ""
    if not rule:
        raise ReportError("file", f"{where} names no rule (ruleId or rule.id).")
    message = result["message"].get("text") or result["message"].get("id") or ""
    path, line = "", None
    locations = result.get("locations") or []
    physical = locations[0].get("physicalLocation") if locations else None
    if physical and physical.get("artifactLocation", {}).get("uri"):
        artifact = physical["artifactLocation"]
        uri = _with_base(artifact["uri"], artifact.get("uriBaseId"), bases)
        placed = place(uri)
        if placed is None:
            raise ReportError(
                "file", f"{where}: {artifact['uri']} is not a file of the repository at this commit. Give the "
                "CI's checkout directory (--checkout-root) if the tool wrote paths absolute to it.",
            )
        path = placed
        line = (physical.get("region") or {}).get("startLine")
    fingerprints = result.get("partialFingerprints") or {}
    return ScanResult(
        rule=rule[:255], path=path, start_line=line, level=result.get("level") or DEFAULT_LEVEL,
        message=message[:MAX_MESSAGE],
        fingerprint="\n".join(f"{key}={value}" for key, value in sorted(fingerprints.items()))[:1000],
    )


def _with_base(uri: str, base_id: str | None, bases: dict) -> str:
    """``uri`` resolved against its ``uriBaseId`` where the log says what that base is."""
    base = (bases.get(base_id) or {}).get("uri") if base_id else None
    if base and not urlsplit(uri).scheme:
        return base.rstrip("/") + "/" + uri
    return uri


def uri_path(uri: str) -> str:
    """A result's URI as a path: a `file:` URI's path, a relative reference as written."""
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return unquote(parts.path)
    if parts.scheme:
        return uri  # http: and the like name no file of the checkout
    return unquote(uri)


def placer(*, files: Callable[[], frozenset[str]], checkout_root: str = "") -> Callable[[str], str | None]:
    """How a result's URI becomes a path in the repository, at one commit whose file paths
    ``files`` lists (asked once, and only if a URI is absolute without a checkout root to
    take off): a relative path is taken as it is; an absolute one loses ``checkout_root`` when
    it starts with it, else it is the longest ending of it that names a file at the commit (as
    GitHub places paths absolute to a CI's checkout). None when nothing fits."""
    root = PurePosixPath(checkout_root) if checkout_root else None
    known: list[frozenset[str]] = []

    def place(uri: str) -> str | None:
        text = uri_path(uri)
        if urlsplit(text).scheme:
            return None
        path = PurePosixPath(text)
        if path.is_absolute():
            if root is not None and path.is_relative_to(root):
                return _safe(str(path.relative_to(root)))
            if not known:
                known.append(files())
            parts = path.parts[1:]
            for start in range(len(parts)):
                candidate = "/".join(parts[start:])
                if candidate in known[0]:
                    return candidate
            return None
        return _safe(text)

    return place


def _safe(path: str) -> str | None:
    try:
        return validate_repo_path(path)
    except RecheckError:
        return None


def _json_path(parts) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
