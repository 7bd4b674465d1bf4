"""Pieces of the OpenAPI description that several endpoints share: path parameters and the error
responses every endpoint can give."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema_serializer

from api.serializers.errors import ErrorSerializer, ValidationErrorSerializer
from findings.exchange import schema as bundle_schema

# The review bundle's serializers describe the import body. Their class names (Repository,
# Finding, ...) are also the names of the API's resources, so their schema components are
# prefixed: BundleRepository, BundleFinding, ... (a name for the schema only; nothing else changes).
for _serializer in (
    bundle_schema.BundleSerializer,
    bundle_schema.RepositorySerializer,
    bundle_schema.PullRequestSerializer,
    bundle_schema.CommitSerializer,
    bundle_schema.LocationSerializer,
    bundle_schema.EvidenceSerializer,
    bundle_schema.ResolutionSerializer,
    bundle_schema.FindingSerializer,
    bundle_schema.TagSerializer,
    bundle_schema.LinkSerializer,
):
    _name = _serializer.__name__.removesuffix("Serializer")
    extend_schema_serializer(component_name=_name if _name == "Bundle" else f"Bundle{_name}")(_serializer)

REPOSITORY_PATH = [
    OpenApiParameter("owner", OpenApiTypes.STR, OpenApiParameter.PATH, description="Repository owner."),
    OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH, description="Repository name."),
]
PULL_REQUEST_PATH = REPOSITORY_PATH + [
    OpenApiParameter("number", OpenApiTypes.INT, OpenApiParameter.PATH, description="Pull request number."),
]
ID_PATH = [OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH)]

UNAUTHENTICATED = OpenApiResponse(
    ErrorSerializer, description="No credentials, and reads are not public on this server: send a token."
)
FORBIDDEN = OpenApiResponse(ErrorSerializer, description="Authenticated, but lacking the permission this needs.")
NOT_FOUND = OpenApiResponse(ErrorSerializer, description="No such object.")
BAD_REQUEST = OpenApiResponse(
    ValidationErrorSerializer, description="Invalid input; `errors` names each field when fields are at fault."
)
THROTTLED = OpenApiResponse(ErrorSerializer, description="Too many writes: wait `Retry-After` seconds.")
UNSUPPORTED_MEDIA_TYPE = OpenApiResponse(ErrorSerializer, description="The body's Content-Type is not accepted.")

SCOPE_FORBIDDEN = OpenApiResponse(ErrorSerializer, description="A token without the `read` scope.")
READ_ERRORS = {401: UNAUTHENTICATED, 403: SCOPE_FORBIDDEN}
LIST_ERRORS = {400: BAD_REQUEST, **READ_ERRORS, 404: OpenApiResponse(ErrorSerializer, description="No such page.")}
DETAIL_ERRORS = {**READ_ERRORS, 404: NOT_FOUND}
WRITE_ERRORS = {400: BAD_REQUEST, 401: UNAUTHENTICATED, 403: FORBIDDEN, 415: UNSUPPORTED_MEDIA_TYPE, 429: THROTTLED}
