"""The export dispatcher and the export_review command."""
import io
import json

import pytest
import yaml
from django.core.management import CommandError, call_command

from findings.exchange import ExportResult, review_export
from findings.services.review_import import parse_bundle
from core.errors import RecheckError
from tests.findings.exchange_data import build_review

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("format", "content_type", "filename"),
    [
        ("bundle", "application/yaml; charset=utf-8", "acme-loader-4108.review.yaml"),
        ("sarif", "application/sarif+json", "acme-loader-4108.sarif"),
        ("markdown", "text/markdown; charset=utf-8", "acme-loader-4108.md"),
    ],
)
def test_each_format_has_its_content_type_and_filename(format, content_type, filename):
    review = build_review()
    result = review_export(pull_request=review.pull_request, format=format)
    assert isinstance(result, ExportResult)
    assert (result.content_type, result.filename) == (content_type, filename)
    assert result.content


def test_an_unknown_format_is_a_recheck_error_naming_the_formats():
    review = build_review()
    with pytest.raises(RecheckError, match="use one of bundle, sarif, markdown"):
        review_export(pull_request=review.pull_request, format="pdf")


def test_the_command_writes_a_bundle_to_standard_output():
    review = build_review()
    out = io.StringIO()
    call_command("export_review", "acme/loader", "4108", stdout=out)
    data = parse_bundle(out.getvalue())
    assert data["pull_request"]["number"] == 4108
    assert [finding["number"] for finding in data["findings"]] == [1, 2, 3, 4, 5]
    assert out.getvalue() == review_export(pull_request=review.pull_request, format="bundle").content


def test_the_command_writes_sarif_to_a_file(tmp_path):
    build_review()
    target = tmp_path / "review.sarif"
    err = io.StringIO()
    call_command("export_review", "acme/loader", "4108", "--format", "sarif", "--out", str(target), stderr=err)
    assert json.loads(target.read_text())["version"] == "2.1.0"
    assert "Wrote the sarif export of acme/loader#4108" in err.getvalue()


def test_the_command_writes_markdown():
    build_review()
    out = io.StringIO()
    call_command("export_review", "acme/loader", "4108", "--format=markdown", stdout=out)
    assert out.getvalue().startswith("## Before acme/loader#4108 can merge")


def test_the_command_explains_an_unknown_pull_request():
    build_review()
    with pytest.raises(CommandError, match="No pull request acme/loader#9 is tracked here"):
        call_command("export_review", "acme/loader", "9")


def test_the_command_explains_an_unknown_format():
    build_review()
    with pytest.raises(CommandError, match="Unknown export format 'pdf'"):
        call_command("export_review", "acme/loader", "4108", "--format", "pdf")


def test_the_exported_bundle_is_plain_yaml():
    review = build_review()
    content = review_export(pull_request=review.pull_request, format="bundle").content
    assert yaml.safe_load(content)["repository"]["slug"] == "acme/loader"
