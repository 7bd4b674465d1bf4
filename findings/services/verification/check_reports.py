"""What a pull request's check items read at the commit verified: the reports of their checks
there, the outcomes of the tests they name and the results they name, loaded together in a few
queries whatever the number of items, and handed to the engine's `check_item_result` as plain
data."""
from __future__ import annotations

from collections import defaultdict

from django.db.models import Q

from core import vocabulary
from engine.git import GitReader
from engine.reports.testids import is_bare_name, named_key
from engine.verification import CheckResult, EvidenceSpec
from engine.verification.checks import CheckReading, ReportSeen, check_item_result, result_place_now
from findings.models import CheckReport, Evidence, ReportedResult, ReportedTest
from reviews.models import PullRequest


class CheckReadings:
    """The reports of a pull request's checks at one commit (``target``), read once, the first
    time a check item asks."""

    def __init__(self, pull_request: PullRequest, reader: GitReader, target: str) -> None:
        self._pull_request = pull_request
        self._reader = reader
        self._target = target
        self._loaded = False
        # The checks of items that found no report at the commit: waiting for CI.
        self.awaited: set[str] = set()

    def result(self, spec: EvidenceSpec) -> CheckResult:
        """The item's state at the commit, as the engine reads its reports there."""
        if not self._loaded:
            self._load(extra=spec)
        reports = [report for report in self._reports.get(spec.check, ())
                   if not spec.app or report["app"] == spec.app]
        ids = {report["pk"] for report in reports}
        if not reports:
            self.awaited.add(spec.check)
        reading = CheckReading(
            reports=tuple(
                ReportSeen(report["conclusion"], report["url"], report["format"] == vocabulary.REPORT_JUNIT,
                           report["format"] == vocabulary.REPORT_SARIF, report["tool"])
                for report in reports
            ),
            tests={test: self._test_outcomes(test, ids) for test in spec.tests},
            results=tuple(self._result_now(spec, ref, ids) for ref in spec.results),
        )
        return check_item_result(spec, reading, self._target[:7])

    def _load(self, *, extra: EvidenceSpec) -> None:
        self._loaded = True
        items = list(
            Evidence.objects.filter(finding__pull_request=self._pull_request, kind=Evidence.Kind.CHECK)
            .values_list("check_name", "check_tests", "check_results", "commit__sha")
        )
        items.append((extra.check, list(extra.tests), [vars(ref) for ref in extra.results], extra.commit))
        names = {name for name, _, _, _ in items}
        self._reports: dict[str, list[dict]] = defaultdict(list)
        for report in (
            CheckReport.objects.filter(repository=self._pull_request.repository, commit__sha=self._target,
                                       check_name__in=names)
            .order_by("received_at", "pk").values("pk", "check_name", "app", "conclusion", "url", "format", "tool")
        ):
            self._reports[report["check_name"]].append(report)
        report_ids = [report["pk"] for reports in self._reports.values() for report in reports]
        tests = {test for _, named, _, _ in items for test in named}
        keys = {named_key(test) for test in tests if not is_bare_name(test)}
        bare = {named_key(test) for test in tests if is_bare_name(test)}
        self._by_key: dict[str, list[tuple[int, str]]] = defaultdict(list)
        self._by_name: dict[str, list[tuple[int, str]]] = defaultdict(list)
        if tests and report_ids:
            for report_id, key, name, outcome in ReportedTest.objects.filter(
                Q(key__in=keys) | Q(bare_name__in=bare), report_id__in=report_ids,
            ).values_list("report_id", "key", "bare_name", "outcome"):
                if key in keys:
                    self._by_key[key].append((report_id, outcome))
                if name in bare:
                    self._by_name[name].append((report_id, outcome))
        rules = {result["rule"] for _, _, named, _ in items for result in named}
        self._now: dict[str, list[tuple[int, str, int | None, str]]] = defaultdict(list)
        self._fingerprints: dict[tuple, str] = {}
        if rules:
            for report_id, rule, path, line, fingerprint in ReportedResult.objects.filter(
                report_id__in=report_ids, rule__in=rules,
            ).values_list("report_id", "rule", "path", "start_line", "fingerprint"):
                self._now[rule].append((report_id, path, line, fingerprint))
            recorded = {sha for _, _, named, sha in items if named and sha}
            for sha, check, rule, path, line, fingerprint in ReportedResult.objects.filter(
                report__repository=self._pull_request.repository, report__commit__sha__in=recorded,
                report__check_name__in=names, rule__in=rules,
            ).exclude(fingerprint="").values_list("report__commit__sha", "report__check_name", "rule", "path",
                                                  "start_line", "fingerprint"):
                self._fingerprints[(sha, check, rule, path, line)] = fingerprint

    def _test_outcomes(self, test: str, ids: set[int]) -> tuple[str, ...]:
        found = self._by_name.get(named_key(test), ()) if is_bare_name(test) else self._by_key.get(named_key(test), ())
        return tuple(outcome for report_id, outcome in found if report_id in ids)

    def _result_now(self, spec: EvidenceSpec, ref, ids: set[int]) -> tuple[str, int | None] | None:
        """Where a named result is reported at the commit, or None: by the tool's fingerprint
        where the report at the item's commit gave one, else where line tracking puts it."""
        reported = [(path, line, fingerprint) for report_id, path, line, fingerprint in self._now.get(ref.rule, ())
                    if report_id in ids]
        fingerprint = self._fingerprints.get((spec.commit, spec.check, ref.rule, ref.path, ref.start_line), "")
        return result_place_now(self._reader, recorded_at=spec.commit, target=self._target, ref=ref,
                                reported=reported, fingerprint=fingerprint)
