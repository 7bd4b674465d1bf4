"""The search box of the index page."""
from django import forms

from findings.models import Finding, Verdict
from findings.selectors import UNVERIFIED, finding_search
from reviews.models import Repository


class FindingSearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search findings",
                        widget=forms.SearchInput(attrs={"placeholder": "Title, text or file path"}))
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

    @property
    def is_searching(self) -> bool:
        return self.is_bound and self.is_valid() and any(self.cleaned_data.get(name) for name in self.fields)

    def results(self):
        data = self.cleaned_data
        return finding_search(
            text=data["q"], kind=data["kind"], status=data["status"], verdict=data["verdict"],
            repository=data["repository"],
        )
