"""The code browser's views: load the PR (if readable), build the page, render it; what cannot be
shown gets a page that says why and what to do. Pages are built in `web.code_browser`."""
from django.conf import settings
from django.shortcuts import render
from django.views.decorators.http import require_GET

from access.permissions import Action, user_may
from web.doors import pull_request_for, readable
from web.code_browser import CodeTreePage, CodeUnavailable, code_file_page, code_tree_page
from web.code_diff import code_diff_page
from web.pagecache import PAGE_PARAMETERS, kept_query, page_served
from web.views.keys import pull_request_page_key, pull_request_read

# The commits a diff is asked between, each a SHA: any other value is rendered and not kept.
DIFF_PARAMETERS = {"from": PAGE_PARAMETERS["commit"], "to": PAGE_PARAMETERS["commit"]}


@require_GET
@readable
def code_tree(request, owner: str, name: str, number: int, sha: str):
    pull_request = pull_request_for(request, owner, name, number)
    try:
        page = code_tree_page(pull_request, sha=sha)
    except CodeUnavailable as problem:
        return _unavailable(request, pull_request, problem)
    return _render_tree(request, page)


@require_GET
@readable
def code_file(request, owner: str, name: str, number: int, sha: str, path: str):
    pull_request = pull_request_for(request, owner, name, number)
    may_write = user_may(request.user, Action.WRITE, pull_request.repository)
    try:
        page = code_file_page(pull_request, sha=sha, path=path, with_findings=may_write)
    except CodeUnavailable as problem:
        return _unavailable(request, pull_request, problem)
    if isinstance(page, CodeTreePage):
        return _render_tree(request, page)
    base = pull_request.get_absolute_url()
    return render(
        request,
        "findings/code/file.html",
        {
            "pull_request": pull_request,
            "page": page,
            "code": page.code,
            "may_write": may_write,
            "max_blob_bytes": settings.RECHECK_MAX_BLOB_BYTES,
            # The finding editor's routes: built from the PR's URL, as the editor defines them.
            "new_finding_url": f"{base}findings/new/",
            "findings_url": f"{base}findings/",
        },
    )


@require_GET
@readable
def code_diff(request, owner: str, name: str, number: int):
    """The changes between two pinned commits (`?from=` and `?to=`, the base and the latest pin
    by default), with the PR's findings placed on them. Kept by the PR's generation: what a commit
    holds never changes, and the pins and findings placed on them move the generation."""
    read = pull_request_read(request, owner, name, number)
    key, _ = pull_request_page_key(request, read, "code_diff", query=kept_query(request, DIFF_PARAMETERS))

    def build():
        pull_request = pull_request_for(request, owner, name, number)
        try:
            page = code_diff_page(pull_request, old=request.GET.get("from", "").strip(),
                                  new=request.GET.get("to", "").strip())
        except CodeUnavailable as problem:
            return _unavailable(request, pull_request, problem)  # sent as it is, never kept
        return "findings/code/diff.html", {"pull_request": pull_request, "page": page}

    return page_served(request, key, build)


def _render_tree(request, page: CodeTreePage):
    return render(
        request, "findings/code/tree.html", {"pull_request": page.code.pull_request, "page": page, "code": page.code}
    )


def _unavailable(request, pull_request, problem: CodeUnavailable):
    return render(
        request,
        "findings/code/unavailable.html",
        {"pull_request": pull_request, "problem": problem},
        status=problem.status,
    )
