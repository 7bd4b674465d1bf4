"""How every vocabulary turns a value into its label: a mapping of the values it knows, and what a
value it does not know reads as (`labelled`). Plain Python."""
from collections.abc import Callable, Mapping


def humanised(value: object) -> str:
    """A value no mapping knows, as a label: 'running_late' reads 'Running late'."""
    return str(value or "").replace("_", " ").capitalize()


# What a strict vocabulary does with a value it does not know: refuse it, naming it.
STRICT = object()


def labelled(labels: Mapping[str, str], *, otherwise: str | Callable[[str], str] | object = humanised,
             name: str = "value") -> Callable[[str | None], str]:
    """The label function of one vocabulary: `labels[value]`, and for a value it does not know
    (None reads as ''), `otherwise`: a fixed label, a function of the value, or `STRICT` (a
    ValueError naming the vocabulary, for a value only a bug could pass)."""

    def label_of(value: str | None) -> str:
        key = value or ""
        if key in labels:
            return labels[key]
        if otherwise is STRICT:
            raise ValueError(f"No label for {name} {value!r}.")
        return otherwise(key) if callable(otherwise) else otherwise

    return label_of
