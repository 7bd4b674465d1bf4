"""The search box of the index page. The box takes the query language itself (words, "phrases",
repo:, path:, tag:, kind:, status:, verdict:); the menus beside it narrow what the box finds (the
box's `kind:cleanup` with the menu's Blocker finds nothing), as the API's filters narrow its `q`."""
from django import forms

from core import vocabulary
from findings.models import Finding, Verdict
from findings.search import UNVERIFIED, SearchQueryError, explain_matches, parse_search
from findings.selectors.findings import finding_search
from reviews.models import Repository


class FindingSearchForm(forms.Form):
    q = forms.CharField(
        required=False, label="Search findings",
        widget=forms.SearchInput(attrs={"placeholder": 'Words, "a phrase", repo:owner/name path:src/ tag:slug'}),
    )
    kind = forms.ChoiceField(required=False, choices=[("", "Any kind"), *Finding.Kind.choices])
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *Finding.Status.choices])
    verdict = forms.ChoiceField(
        required=False,
        label="Verdict at the latest verified commit",
        choices=[("", "Any verdict"), *Verdict.choices, (UNVERIFIED, vocabulary.NOT_VERIFIED_LABEL)],
    )
    repository = forms.ModelChoiceField(
        required=False, queryset=Repository.objects.order_by("slug"), to_field_name="slug", empty_label="Any repository"
    )

    def __init__(self, *args, reader, **kwargs):
        super().__init__(*args, **kwargs)
        # The menu and the results hold only what the reader may read.
        self.reader = reader
        self.fields["repository"].queryset = Repository.objects.readable_by(reader).order_by("slug")

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        menus = {
            "repo": data["repository"].slug if data.get("repository") else "",
            **{name: data[name] for name in ("kind", "status", "verdict") if data.get(name)},
        }
        try:
            data["query"] = parse_search(data.get("q", ""), narrowed_by=menus)
        except SearchQueryError as error:
            raise forms.ValidationError(str(error)) from None
        return data

    @property
    def is_searching(self) -> bool:
        query = self.cleaned_data["query"] if self.is_bound and self.is_valid() else None
        return query is not None and bool(query.text.strip() or query.narrowed)

    def results(self):
        return finding_search(self.cleaned_data["query"], reader=self.reader)

    def explain(self, page) -> None:
        explain_matches(page.object_list, self.cleaned_data["query"])
