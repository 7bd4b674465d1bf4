"""Other findings, as a finding names them: brief, in its links (made from either end) and among
its related findings, each with why."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.fields import AbsoluteSiteUrlField, ApiUrlField
from findings.models import Finding, FindingLink


class FindingBriefSerializer(serializers.ModelSerializer):
    """Another finding, as a link or a related finding names it."""

    url = ApiUrlField("api:finding-detail", lambda finding: {"pk": finding.pk})
    html_url = AbsoluteSiteUrlField()
    reference = serializers.CharField(read_only=True, help_text="owner/name#pull request/finding")

    class Meta:
        model = Finding
        fields = ["id", "url", "html_url", "reference", "kind", "status", "title"]


class FindingLinkSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The link's id: DELETE /api/findings/<id>/links/<link id> removes it.")
    kind = serializers.ChoiceField(choices=FindingLink.Kind.choices, help_text="As recorded, from source to target.")
    direction = serializers.ChoiceField(
        choices=["outgoing", "incoming"], help_text="outgoing: this finding made the link; incoming: the other did."
    )
    label = serializers.CharField(help_text="How it reads from this finding, e.g. 'Duplicated by'.")
    note = serializers.CharField()
    finding = FindingBriefSerializer(help_text="The finding at the other end.")


class RelatedFindingSerializer(serializers.Serializer):
    finding = FindingBriefSerializer()
    reasons = serializers.ListField(
        child=serializers.CharField(),
        help_text='Why it is related, e.g. "Same file: src/loader.py", "Shared tag: silent-failure", '
        '"Similar title (64% alike)", or the link ("Duplicated by this finding").',
    )
    link = serializers.SerializerMethodField(help_text="The explicit link, when it is one; null otherwise.")

    @extend_schema_field(
        {"type": "object", "nullable": True,
         "properties": {"id": {"type": "integer"}, "kind": {"type": "string"}, "label": {"type": "string"}}}
    )
    def get_link(self, item):
        if item.link is None:
            return None
        return {"id": item.link.link.pk, "kind": item.link.link.kind, "label": item.link.label}


def finding_link_data(link: FindingLink, finding: Finding) -> dict:
    return {
        "id": link.pk,
        "kind": link.kind,
        "direction": "outgoing" if link.source_id == finding.pk else "incoming",
        "label": link.label_from(finding),
        "note": link.note,
        "finding": link.other_end(finding),
    }
