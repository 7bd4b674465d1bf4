"""The URL fields every resource shows: `url`, the resource in the API, and `html_url`, its page on
the site, both absolute."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse


def _absolute(request, path: str) -> str:
    return request.build_absolute_uri(path) if request is not None else path


@extend_schema_field(OpenApiTypes.URI)
class AbsoluteSiteUrlField(serializers.ReadOnlyField):
    """The object's page on the site (its get_absolute_url), as an absolute URL."""

    def __init__(self, **kwargs):
        super().__init__(source="*", **kwargs)

    def to_representation(self, instance):
        return _absolute(self.context.get("request"), instance.get_absolute_url())


@extend_schema_field(OpenApiTypes.URI)
class ApiUrlField(serializers.ReadOnlyField):
    """An absolute API URL for the object, from a view name and the object's attributes."""

    def __init__(self, view_name: str, kwargs_from, **kwargs):
        self.view_name = view_name
        self.kwargs_from = kwargs_from
        super().__init__(source="*", **kwargs)

    def to_representation(self, instance):
        return reverse(self.view_name, kwargs=self.kwargs_from(instance), request=self.context.get("request"))
