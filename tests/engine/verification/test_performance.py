"""Checking many items costs a handful of git processes, not one per item or file."""

import subprocess

from engine.verification import EvidenceSpec, check_evidence
from engine.git import GitReader
from tests.gitrepo import GitRepoBuilder

FILES = 80
LINES = 60


def body(number):
    return [f"    result_{number}_{line} = compute({number * 1000 + line})" for line in range(LINES)]


def test_a_thousand_snippets_need_only_a_few_git_processes(tmp_path, monkeypatch):
    repo = GitRepoBuilder(tmp_path)
    for number in range(FILES):
        repo.write(f"pkg/mod_{number}.py", "\n".join(body(number)) + "\n")
    base = repo.commit("base")
    for number in range(0, FILES, 4):
        repo.write(f"pkg/mod_{number}.py", "# header\n" + "\n".join(body(number)) + "\n")
    repo.rename("pkg/mod_1.py", "pkg/renamed_1.py")
    repo.write("pkg/mod_2.py", "\n".join(line.replace("compute", "calc") for line in body(2)) + "\n")
    target = repo.commit("target")
    specs = [
        EvidenceSpec(
            "snippet",
            commit=base,
            path=f"pkg/mod_{item % FILES}.py",
            start_line=item % (LINES - 2) + 1,
            end_line=item % (LINES - 2) + 3,
            text="\n".join(body(item % FILES)[item % (LINES - 2) : item % (LINES - 2) + 3]),
        )
        for item in range(1000)
    ]

    started = []
    real_popen = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a[0]) or real_popen(*a, **k))
    with GitReader(repo.git_dir) as reader:
        results = [check_evidence(reader, spec, target) for spec in specs]

    states = [result.state for result in results]
    assert states.count("gone") == sum(1 for spec in specs if spec.path == "pkg/mod_2.py")
    assert states.count("holds") + states.count("gone") == len(specs)
    # What it costs in time is measured by bench/verify_bench.py; here, that it stays a few processes.
    assert len(started) <= 3, started  # cat-file, one diff-tree, maybe one more
