"""The pages across a repository's pull requests (the repository's page, a file's page) and a tag's
page across repositories, each kept once per version of what it reads (`web.pagecache`).

A repository's pages are kept by its version (`web.page_keys.repository_key_read`): its pull
requests' generations, which every write those pages show moves forward (a follow-up's too), with
the repository's own fields; and by the reader's visibility there. A tag's page shows findings of
every repository the reader may read: it is kept by every pull request's version, the reader's
scope and the tag's descriptions."""
from django.core.paginator import Paginator
from django.db import connection
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from access.permissions import Action
from findings.models import Tag, TagDescription
from findings.selectors.figures import file_findings_page, repository_figures
from findings.selectors.findings import tags_readable_by
from findings.selectors.follow_ups import open_follow_ups_over_time, overdue_follow_ups_over_time
from findings.selectors.policy import policy_values, repository_policy
from findings.state.stored import states_attach
from forge.outbox.selectors import repository_failed_calls
from presentation.charts import bar_chart, line_chart
from reviews.models import Repository
from reviews.selectors import pull_requests_version
from web.doors import readable
from web.forms.policy import PolicyForm
from web.pagecache import PAGE_PARAMETERS, PageKey, Visibility, kept_query, page_hour, page_served, reader_scope
from web.views.keys import repository_page_key, repository_read
from web.views.pages import SEARCH_PAGE_SIZE

# The open blockers a repository's page lists, oldest first (their count and ages are of them all,
# and each pull request's Blockers page lists its own): the page's size does not grow with them.
REPOSITORY_BLOCKERS_SHOWN = 50
FILE_PAGE_SIZE = 50


@require_GET
@readable
def repository_page(request, owner: str, name: str):
    read = repository_read(request, owner, name)
    failures = repository_failed_calls(read.repository) if read.calls_failed else []
    # It shows ages and the follow-ups by day: built again each hour it is read in.
    key = repository_page_key(request, read, "repository", query=kept_query(request, {}), extra=(page_hour(),),
                              failures=failures)

    def build():
        repository = Repository.objects.get(pk=read.repository.pk)
        figures = repository_figures(repository, blockers_shown=REPOSITORY_BLOCKERS_SHOWN)
        # The policy's writes move every PR's generation, so the repository's version with them.
        policy = repository_policy(repository)
        charts = [
            ("Open blockers by age", figures.open_blockers_by_age, "open blockers"),
            ("Time from finding to fix", figures.fix_times, "fixed findings"),
            ("How findings ended", figures.endings, "findings"),
            ("Files with the most findings", figures.top_files, "findings"),
            ("Tags that recur", figures.recurring_tags, "findings"),
        ]
        return "findings/repository.html", {
            "repository": repository,
            "figures": figures,
            "charts": [
                {"title": title, "bars": bars, "svg": bar_chart(title=title, bars=bars, unit=unit)}
                for title, bars, unit in charts
            ],
            "pull_requests": list(repository.pull_requests.order_by("-number")),
            "github_failures": failures,
            "may_resend": key.reader.may(Action.VERIFY),
            "may_set_webhooks": key.reader.may(Action.SETTINGS),
            "policy": policy,
            "policy_form": PolicyForm(initial=policy_values(policy)) if key.reader.may(Action.SETTINGS) else None,
            "follow_ups_chart": line_chart(
                title="Open follow-ups over time", unit="open follow-ups",
                points=open_follow_ups_over_time(repository)),
            "overdue_chart": line_chart(
                title="Overdue follow-ups over time", unit="overdue follow-ups",
                points=overdue_follow_ups_over_time(repository)),
        }

    return page_served(request, key, build)


@require_GET
@readable
def file_page(request, owner: str, name: str, path: str):
    read = repository_read(request, owner, name)
    key = repository_page_key(request, read, "file", query=kept_query(request, {"page": PAGE_PARAMETERS["page"]}))

    def build():
        repository = Repository.objects.get(pk=read.repository.pk)
        found, page = file_findings_page(repository, path, page_number=request.GET.get("page"),
                                         per_page=FILE_PAGE_SIZE)
        states_attach(found.findings)
        return "findings/file.html", {"repository": repository, "file": found, "findings_page": page,
                                      "file_page_list": {"list_page": page}}

    return page_served(request, key, build)


def _tag_read(slug: str) -> tuple | None:
    """The tag's id and what its descriptions are at (how many, the latest written), in one query;
    None when there is no such tag. A description is written apart from any finding, so no
    generation follows it."""
    tags, descriptions = (connection.ops.quote_name(model._meta.db_table) for model in (Tag, TagDescription))
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT t."id", (SELECT COUNT(*) FROM {descriptions} d WHERE d."tag_id" = t."id"), '
            f'(SELECT MAX(d."updated_at") FROM {descriptions} d WHERE d."tag_id" = t."id") '
            f'FROM {tags} t WHERE t."slug" = %s',
            [slug],
        )
        row = cursor.fetchone()
    return None if row is None else (row[0], row[1], str(row[2]))


@require_GET
@readable
def tag_page(request, slug: str):
    reader = request.user
    tag_read = _tag_read(slug)
    if tag_read is None:
        raise Http404("No such tag.")
    key = PageKey(
        page="tag", path=request.path, reads=("pull_requests", pull_requests_version(), tag_read),
        # Its findings are of every repository the reader may read: their scope is their visibility.
        reader=Visibility(signed_in=bool(reader.is_authenticated), repository="", actions=()),
        query=kept_query(request, {"page": PAGE_PARAMETERS["page"]}), extra=(reader_scope(reader),),
    )

    def build():
        # A tag carried or described only where the reader may not read is not theirs to see; its
        # descriptions are those of the repositories they read (`readable_descriptions`).
        tag = get_object_or_404(tags_readable_by(reader), slug=slug)
        findings = (tag.findings.readable_by(reader).select_related("pull_request__repository")
                    .order_by("-created_at", "-id"))
        page = Paginator(findings, SEARCH_PAGE_SIZE).get_page(request.GET.get("page"))
        page.object_list = states_attach(page.object_list)
        return "findings/tag.html", {"tag": tag, "findings": page}

    return page_served(request, key, build)
