"""Edits in the admin, recorded in the audit log with the fields they changed, before and after.
An admin whose model has no service of its own for edits (findings' and evidence's text, a
repository's settings, a user's groups and permissions) inherits this instead of ModelAdmin."""
from django.contrib import admin
from django.forms.models import model_to_dict

from access.audit import audit_changes, audit_record
from access.permissions import Action, readable_rows, user_may

# Never in the log: a password hash is a secret, whatever its form.
UNRECORDED_FIELDS = {"password"}


class RecordAdmin:
    """For the admin of a record (the audit log, a finding's history, a follow-up's): written by
    the services alone, never added to, changed or deleted in the admin. Put before the ModelAdmin
    it is mixed into."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class RepositoryScopedAdmin(admin.ModelAdmin):
    """An admin of rows that belong to a repository: a staff user who is not a superuser lists and
    opens only the rows of repositories they may read (`access.permissions`, as everywhere else:
    another's row is a 404), and changes or deletes a row only with `change_action` on its
    repository, besides the model permission the admin always asks for."""

    # The path from the object to its repository ("self" for repositories themselves).
    audit_repository_path = ""
    # What changing a row of this admin is, on its repository.
    change_action = Action.WRITE

    def _repository_lookup(self) -> str | None:
        if not self.audit_repository_path:
            return None
        return "" if self.audit_repository_path == "self" else self.audit_repository_path.replace(".", "__")

    def _audit_repository(self, obj):
        if not self.audit_repository_path or obj is None:
            return None
        value = obj
        for part in self.audit_repository_path.split(".") if self.audit_repository_path != "self" else []:
            value = getattr(value, part, None)
        return value

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        lookup = self._repository_lookup()
        if lookup is None:
            return queryset
        return readable_rows(queryset, request.user, lookup)

    def _may_change(self, request, obj) -> bool:
        if obj is None or self._repository_lookup() is None:
            return True
        repository = self._audit_repository(obj)
        return repository is None or user_may(request.user, self.change_action, repository)

    def has_change_permission(self, request, obj=None) -> bool:
        return super().has_change_permission(request, obj) and self._may_change(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and self._may_change(request, obj)


class AuditedModelAdmin(RepositoryScopedAdmin):
    # The path from the object to its repository (e.g. "pull_request.repository"), to filter the
    # log and the admin's lists by.
    audit_repository_path = ""

    def _audit_action(self, verb: str) -> str:
        return f"{self.model._meta.model_name}.{verb}"

    def save_model(self, request, obj, form, change):
        fields = _recorded_fields(obj, form.changed_data)
        before = model_to_dict(type(obj)._default_manager.get(pk=obj.pk), fields=fields) if change else {}
        super().save_model(request, obj, form, change)
        # Many-to-many fields are saved after this; the form's cleaned data is what they become.
        after = {name: form.cleaned_data.get(name) for name in fields}
        audit_record(
            action=self._audit_action("edit" if change else "add"), actor=request.user, target=str(obj),
            repository=self._audit_repository(obj), changes=audit_changes(before, after),
        )

    def delete_model(self, request, obj):
        self._audit_delete(request, obj)
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self._audit_delete(request, obj)
        super().delete_queryset(request, queryset)

    def _audit_delete(self, request, obj) -> None:
        audit_record(
            action=self._audit_action("delete"), actor=request.user, target=str(obj),
            repository=self._audit_repository(obj),
        )

    def save_formset(self, request, form, formset, change):
        # An inline's rows (a finding's evidence, a pull request's pins) are recorded as their own
        # model's edits, with the values from before the save read first.
        before = {}
        for row in formset.forms:
            if row.instance.pk is not None and row.has_changed():
                fields = _recorded_fields(row.instance, row.changed_data)
                stored = type(row.instance)._default_manager.filter(pk=row.instance.pk).first()
                before[row.instance.pk] = model_to_dict(stored, fields=fields) if stored else {}
        super().save_formset(request, form, formset, change)
        name = formset.model._meta.model_name
        repository = self._audit_repository(form.instance)
        for obj in formset.new_objects:
            audit_record(action=f"{name}.add", actor=request.user, target=str(obj), repository=repository,
                         changes=audit_changes({}, model_to_dict(obj, fields=_recorded_fields(obj, None))))
        for obj, _fields in formset.changed_objects:
            old = before.get(obj.pk, {})
            audit_record(action=f"{name}.edit", actor=request.user, target=str(obj), repository=repository,
                         changes=audit_changes(old, model_to_dict(obj, fields=list(old))))
        for obj in formset.deleted_objects:
            audit_record(action=f"{name}.delete", actor=request.user, target=str(obj), repository=repository)


def _recorded_fields(obj, names) -> list[str]:
    """The model's own fields among `names` (all of them for None): a form's other fields, such
    as a new user's two password fields, never reach the log."""
    model_fields = {field.name for field in obj._meta.get_fields() if field.concrete or field.many_to_many}
    wanted = model_fields if names is None else set(names)
    return sorted((wanted & model_fields) - UNRECORDED_FIELDS)
