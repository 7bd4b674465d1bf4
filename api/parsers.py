"""Request body parsers for the API: JSON read with the limits every document from outside gets
(nesting, integer digits, size), so a hostile body is a 400 and never a worker's minute."""
from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from core.documents import DocumentError, load_json


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read(limit + 1) if stream is not None else b""
        if limit is not None and len(raw) > limit:
            raise ParseError(f"The body is larger than {limit:,} bytes.")
        try:
            return load_json(raw.decode((parser_context or {}).get("encoding") or "utf-8"))
        except UnicodeDecodeError:
            raise ParseError("The body is not UTF-8 text.") from None
        except DocumentError as error:
            raise ParseError(str(error)) from None
