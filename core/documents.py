"""Reading JSON and YAML that strangers send, with bounds on what the text may make a parser do.

A few hundred bytes can cost a web worker minutes and gigabytes without these: YAML aliases
expand a node into every place that names it (a "billion laughs"), deep nesting exhausts the
recursion limit, and a number of thousands of digits is slow to convert and overflows every
database column. Nothing a review bundle or a webhook payload needs comes near the limits.
Plain Python (the json module and PyYAML): no Django here.
"""
from __future__ import annotations

import json

import yaml

from core.errors import RecheckError

# A bundle is bundle > findings > finding > evidence > item > value: six levels. Payloads from
# GitHub go a little deeper (pull_request > head > repo > owner > ...).
MAX_DEPTH = 32
# No column takes an integer this long (the widest, bigint, has 19 digits); up to here a number
# still reaches its field, whose error names it.
MAX_INTEGER_DIGITS = 32
# Containers and scalars in one document: a 9,000-finding bundle with ten evidence items each
# has about 1.2 million.
MAX_NODES = 3_000_000


class DocumentError(RecheckError):
    """Text that is not a JSON or YAML document within the limits."""


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise DocumentError(f"A number has more than {MAX_INTEGER_DIGITS} digits; no field takes one that long.")
    return int(text)


def _parse_constant(name: str):
    raise DocumentError(f"{name} is not a JSON number; send a finite number or a string.")


def load_json(text: str | bytes):
    """``text`` as JSON data, or DocumentError (also for invalid JSON, with line and column)."""
    try:
        data = json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant)
    except RecursionError:
        raise _too_deep() from None
    except json.JSONDecodeError as error:
        raise DocumentError(f"Not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}.") from None
    except ValueError as error:  # e.g. a float too long to convert
        raise DocumentError(f"Not valid JSON: {error}.") from None
    check_shape(data)
    return data


def load_yaml(text: str):
    """``text`` as YAML data (the safe subset, no aliases), or DocumentError saying where it is wrong."""
    loader = None
    try:
        loader = _BoundedLoader(text)
        return loader.get_single_data()
    except RecursionError:
        raise _too_deep() from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        raise DocumentError(f"Not valid YAML{at}: {getattr(error, 'problem', None) or error}.") from None
    finally:
        if loader is not None:
            loader.dispose()


def check_shape(data) -> None:
    """Raise DocumentError when ``data`` nests deeper than MAX_DEPTH or holds more than MAX_NODES
    values. Walked without recursion, so the check itself cannot run out of stack."""
    stack = [(data, 1)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise DocumentError(f"The document holds more than {MAX_NODES:,} values; split it.")
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > MAX_DEPTH:
            raise _too_deep()
        stack.extend((child, depth + 1) for child in children)


def _too_deep() -> DocumentError:
    return DocumentError(f"The document nests deeper than {MAX_DEPTH} levels; nothing Recheck reads needs that.")


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing aliases and counting depth and nodes as it composes."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not accepted; write the value out in full", event.start_mark
            )
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise DocumentError(f"The document holds more than {MAX_NODES:,} values; split it.")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _too_deep()
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node):
        digits = node.value.replace("_", "").lstrip("+-")
        if len(digits) > MAX_INTEGER_DIGITS:
            raise DocumentError(
                f"Line {node.start_mark.line + 1}: a number has more than {MAX_INTEGER_DIGITS} digits; "
                "no field takes one that long."
            )
        return super().construct_yaml_int(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
