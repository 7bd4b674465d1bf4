"""Reading the domain's code for the functions that write (an AST scan), and what each must do.

A function writes when its body saves, creates, updates or deletes rows (`.save()`,
`.objects.create()`, a queryset's `.update()`, a related manager's `.set()`…) or calls a function
that does, followed through every module scanned. Each public function of the required modules
that writes must be registered with `access.audit.writes`:

- a service (registered without `within` or `system`) checks its actor (`actor_check`, `user_may`,
  `may_add_repositories`, `review_import_check`) and records an audit entry (`audit_record`),
  itself or through what it calls;
- a part (`within=`) is called, directly or not, by each service it names, and those are
  registered services;
- a worker's or the forge's write (`system=`) says why no person is checked.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The modules whose writing functions must be registered.
REQUIRED = sorted((ROOT / "findings" / "services").rglob("*.py"))
# Modules read to know which of their functions write (what the required ones call).
KNOWN = [ROOT / "reviews" / "services.py", ROOT / "reviews" / "mirrors.py", ROOT / "access" / "tokens.py"]

CHECKS = {"actor_check", "user_may", "may_add_repositories", "review_import_check"}
AUDITS = {"audit_record"}
ALWAYS_WRITES = {"save", "delete", "bulk_create", "bulk_update", "get_or_create", "update_or_create"}
QUERYSET_WRITES = {"create", "update"}
RELATED_WRITES = {"set", "add", "remove", "clear"}


@dataclass
class Function:
    module: str
    name: str
    writes_itself: bool
    calls: set[str]
    registered: dict | None  # the keywords of its @writes(...), None when not registered
    public: bool
    required: bool
    line: int
    flags: dict = field(default_factory=dict)

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.name}"


def _module_name(path: Path) -> str:
    if not path.is_relative_to(ROOT):
        return path.stem
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _mentions_objects(node: ast.AST) -> bool:
    return any(isinstance(part, ast.Attribute) and part.attr == "objects" for part in ast.walk(node))


def _writes(call: ast.Call) -> bool:
    function = call.func
    if not isinstance(function, ast.Attribute):
        return False
    receiver = function.value
    if function.attr in ALWAYS_WRITES:
        return True
    if function.attr in QUERYSET_WRITES:
        return isinstance(receiver, ast.Call) or _mentions_objects(receiver)
    if function.attr in RELATED_WRITES:
        return isinstance(receiver, ast.Attribute)
    return False


def _registration(decorators: list[ast.expr]) -> dict | None:
    for decorator in decorators:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", getattr(decorator.func, "attr", "")) == "writes":
            keywords = {}
            for keyword in decorator.keywords:
                try:
                    keywords[keyword.arg] = ast.literal_eval(keyword.value)
                except ValueError:
                    keywords[keyword.arg] = ast.unparse(keyword.value)
            return keywords
    return None


def read_module(path: Path, *, required: bool, module: str | None = None) -> list[Function]:
    tree = ast.parse(path.read_text(), filename=str(path))
    module = module or _module_name(path)
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    functions = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        calls, writes_itself = set(), False
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                writes_itself = writes_itself or _writes(inner)
                if isinstance(inner.func, ast.Name):
                    calls.add(inner.func.id)
                elif isinstance(inner.func, ast.Attribute):
                    calls.add(inner.func.attr)
        registered = _registration(node.decorator_list)
        if registered is not None:
            # Names of module constants (IMPORT = "findings.services…") read as their values.
            within = registered.get("within", ())
            if isinstance(within, str):
                within = tuple(part.strip() for part in within.strip("()").split(",") if part.strip())
                within = tuple(constants.get(part, part) for part in within)
            registered["within"] = tuple(within)
            if "system" in registered:
                system = registered["system"]
                registered["system"] = constants.get(system, system) if isinstance(system, str) else system
        functions.append(Function(module, node.name, writes_itself, calls, registered,
                                  not node.name.startswith("_"), required, node.lineno))
    return functions


def scan(required: list[Path] = REQUIRED, known: list[Path] = KNOWN, extra: list[Function] = ()) -> list[str]:
    """What is wrong with the writing functions of `required` (empty when nothing is)."""
    functions = [f for path in required for f in read_module(path, required=True)]
    functions += [f for path in known for f in read_module(path, required=False)] + list(extra)
    by_name: dict[str, list[Function]] = {}
    for function in functions:
        by_name.setdefault(function.name, []).append(function)
    by_dotted = {function.dotted: function for function in functions}

    def callees(function: Function) -> list[Function]:
        found = []
        for name in function.calls:
            candidates = by_name.get(name, [])
            same = [c for c in candidates if c.module == function.module]
            found += same or candidates
        return found

    def reaches(function: Function, test, seen=None) -> bool:
        seen = set() if seen is None else seen
        if function.dotted in seen:
            return False
        seen.add(function.dotted)
        return test(function) or any(reaches(callee, test, seen) for callee in callees(function))

    def writes(function: Function) -> bool:
        return reaches(function, lambda f: f.writes_itself)

    problems = []
    for function in functions:
        if not (function.required and function.public):
            continue
        registration = function.registered
        if registration is None:
            if writes(function):
                problems.append(f"{function.dotted} (line {function.line}) writes but is not registered with "
                                "@writes: register it as a service that checks its actor and audits, as a part "
                                "within one, or as a system write saying why.")
            continue
        if registration.get("system"):
            continue
        if "system" in registration and not registration["system"]:
            problems.append(f"{function.dotted}: a system write must say why no person is checked.")
            continue
        within = registration.get("within") or ()
        if within:
            for service_name in within:
                service = by_dotted.get(service_name)
                if service is None or service.registered is None or service.registered.get("within"):
                    problems.append(f"{function.dotted} is a part within {service_name}, which is not a "
                                    "registered service.")
                elif not reaches(service, lambda f, part=function.dotted: f.dotted == part):
                    problems.append(f"{function.dotted} is a part within {service_name}, which never calls it.")
            continue
        if not reaches(function, lambda f: bool(f.calls & CHECKS)):
            problems.append(f"{function.dotted} (line {function.line}) writes without checking its actor "
                            f"(call one of {', '.join(sorted(CHECKS))}).")
        if not reaches(function, lambda f: bool(f.calls & AUDITS)):
            problems.append(f"{function.dotted} (line {function.line}) writes without an audit entry "
                            "(call audit_record).")
    return problems
