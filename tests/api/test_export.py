import json

import pytest
import yaml

from findings.services.review_import import validate_bundle

URL = "/api/repos/acme/loader/pulls/4108/export"


def test_the_default_export_is_a_bundle_that_imports_again(anonymous_reader, review):
    response = anonymous_reader.get(URL)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/yaml")
    assert 'filename="acme-loader-4108.review.yaml"' in response["Content-Disposition"]
    bundle = validate_bundle(yaml.safe_load(response.content))
    assert [finding["number"] for finding in bundle["findings"]] == [1, 2, 3, 4, 5]


def test_sarif_has_one_result_per_open_finding(anonymous_reader, review):
    response = anonymous_reader.get(URL, {"format": "sarif"})
    assert response.status_code == 200 and response["Content-Type"] == "application/sarif+json"
    log = json.loads(response.content)
    assert log["version"] == "2.1.0"
    assert sorted(result["ruleId"] for result in log["runs"][0]["results"]) == [
        "recheck/4108/1", "recheck/4108/2", "recheck/4108/4"
    ]


def test_markdown_is_a_comment_to_paste(anonymous_reader, review):
    response = anonymous_reader.get(URL, {"format": "markdown"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")
    assert "Tolerance lowered to 10" in response.content.decode()


def test_an_unknown_format_is_a_json_error_that_lists_the_formats(anonymous_reader, review):
    response = anonymous_reader.get(URL, {"format": "pdf"})
    assert response.status_code == 400
    assert "bundle, sarif, markdown" in response.json()["detail"]


def test_export_follows_the_read_access_rule(anonymous_reader, review, settings):
    settings.RECHECK_PUBLIC_READ = False
    assert anonymous_reader.get(URL).status_code in (401, 403)


@pytest.mark.parametrize("path", ["/api/repos/acme/loader/pulls/1/export", "/api/repos/acme/nope/pulls/4108/export"])
def test_an_unknown_pull_request_is_a_404(anonymous_reader, review, path):
    assert anonymous_reader.get(path).status_code == 404
