"""The forge package is laid out in packages, not prefixes: no module is named with another
module's name as its prefix (`thread_models` beside `threads`, `gitlab_hooks` beside `gitlab`), no
two modules of a package share a prefix, and none is too long to read."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORGE = ROOT / "forge"
MAX_LINES = 500
# Commands are named for what they do (send_forge_calls), migrations by their number.
SKIPPED = ("migrations", "commands")


def forge_modules(root: Path = FORGE) -> list[Path]:
    return sorted(path for path in root.rglob("*.py")
                  if path.name != "__init__.py" and not set(SKIPPED) & set(path.relative_to(root).parts[:-1]))


def prefix_offences(paths: list[Path], root: Path = FORGE) -> list[str]:
    """Each module whose name starts with another module's (or package's) name, singular or plural,
    and each pair of modules of one package that share a prefix."""
    names = {path.stem for path in paths} | {path.parent.name for path in paths if path.parent != root}
    offences = []
    by_package: dict[Path, dict[str, list[str]]] = {}
    for path in paths:
        if "_" not in path.stem:
            continue
        prefix = path.stem.split("_")[0]
        taken = {prefix, f"{prefix}s", prefix.removesuffix("s")} & (names - {path.stem})
        if taken:
            offences.append(f"{path.relative_to(root)} is named with the prefix of {', '.join(sorted(taken))}")
        by_package.setdefault(path.parent, {}).setdefault(prefix, []).append(path.stem)
    for package, prefixes in by_package.items():
        for prefix, stems in prefixes.items():
            if len(stems) > 1:
                offences.append(f"{package.relative_to(root)}: {', '.join(sorted(stems))} share {prefix}_")
    return offences


def test_no_module_in_forge_is_named_with_another_modules_prefix():
    assert prefix_offences(forge_modules()) == []


def test_the_flat_layout_it_replaced_would_fail_the_check(tmp_path):
    for name in ("threads", "thread_models", "thread_triage", "github", "github_threads", "gitlab", "gitlab_hooks",
                 "outbox", "content"):
        (tmp_path / f"{name}.py").write_text("")
    offences = prefix_offences(forge_modules(tmp_path), tmp_path)
    assert "thread_models.py is named with the prefix of threads" in offences
    assert "github_threads.py is named with the prefix of github" in offences
    assert "gitlab_hooks.py is named with the prefix of gitlab" in offences
    assert any("thread_models, thread_triage share thread_" in offence for offence in offences)
    assert not any(offence.startswith(("outbox", "content")) for offence in offences)


def test_no_module_in_forge_is_over_500_lines():
    lengths = {str(path.relative_to(FORGE)): len(path.read_text().splitlines()) for path in forge_modules()}
    assert len(lengths) > 30
    assert {path: lines for path, lines in lengths.items() if lines > MAX_LINES} == {}
