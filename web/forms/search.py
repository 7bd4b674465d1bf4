"""The search box of the index page. The box takes the query language itself (words, "phrases",
repo:, path:, tag:, kind:, status:, verdict:); the menus beside it only add filters to the text, so
the page searches exactly as the API's `q` does."""
from django import forms

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
        choices=[("", "Any verdict"), *Verdict.choices, (UNVERIFIED, "Not verified")],
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
        menus = [
            f"repo:{data['repository'].slug}" if data.get("repository") else "",
            *(f"{name}:{data[name]}" for name in ("kind", "status", "verdict") if data.get(name)),
        ]
        text = " ".join(part for part in [data.get("q", ""), *menus] if part)
        try:
            data["query"] = parse_search(text)
        except SearchQueryError as error:
            raise forms.ValidationError(str(error)) from None
        return data

    @property
    def is_searching(self) -> bool:
        return self.is_bound and self.is_valid() and bool(self.cleaned_data["query"].text.strip())

    def results(self):
        return finding_search(self.cleaned_data["query"], reader=self.reader)

    def explain(self, page) -> None:
        explain_matches(page.object_list, self.cleaned_data["query"])
