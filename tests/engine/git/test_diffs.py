"""The unified diff between two commits, over real repositories: numbered lines on both sides, the
files in the order and with the statuses `changes` gives (renames, deletions, binaries, a file
become a symbolic link), and a bound on its size."""
import os

from engine.git import GitReader
from engine.git.diffs import commit_diff
from tests.gitrepo import GitRepoBuilder

APP = "".join(f"value_{n} = {n}\n" for n in range(1, 21))


def test_lines_are_numbered_on_both_sides_and_files_come_with_their_status(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    base = repo.write("src/app.py", APP).write("docs/guide.md", "# Guide\n" + "prose\n" * 20).write(
        "old.txt", "gone\n").write("logo.png", b"\x89PNG\r\n\x1a\n\x00" + bytes(range(256))).commit("base")
    head = (repo.write("src/app.py", APP.replace("value_7 = 7\n", "value_7 = 'seven'\nvalue_7b = 7\n"))
            .rename("docs/guide.md", "docs/manual.md").delete("old.txt").write("new.py", "NEW = 1\n")
            .write("logo.png", b"\x89PNG\r\n\x1a\n\x01" + bytes(range(256))).commit("head"))
    with GitReader(repo.git_dir) as reader:
        diff = commit_diff(reader, base, head)
    by_path = {file.path: file for file in diff.files}
    assert [(file.path, file.status) for file in diff.files] == [
        ("docs/manual.md", "renamed"), ("logo.png", "modified"), ("new.py", "added"), ("old.txt", "deleted"),
        ("src/app.py", "modified"),
    ]
    assert by_path["docs/manual.md"].old_path == "docs/guide.md" and not by_path["docs/manual.md"].hunks
    assert by_path["logo.png"].binary
    app = by_path["src/app.py"]
    assert (app.added, app.removed) == (2, 1)
    [hunk] = app.hunks
    assert (hunk.old_start, hunk.new_start) == (4, 4)
    changed = [(line.kind, line.text, line.old, line.new) for line in hunk.lines if line.kind != "context"]
    assert changed == [("removed", "value_7 = 7", 7, None), ("added", "value_7 = 'seven'", None, 7),
                       ("added", "value_7b = 7", None, 8)]
    after = [line for line in hunk.lines if line.kind == "context" and line.text == "value_8 = 8"][0]
    assert (after.old, after.new) == (8, 9)
    assert [(line.kind, line.text) for line in by_path["old.txt"].hunks[0].lines] == [("removed", "gone")]


def test_a_file_become_a_link_is_one_change_and_a_large_diff_is_cut(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    base = repo.write("a.txt", "a\n").write("b.txt", "".join(f"{n}\n" for n in range(100))).write(
        "c.txt", "c\n").commit("base")
    os.remove(repo.path / "a.txt")
    os.symlink("b.txt", repo.path / "a.txt")
    head = repo.write("b.txt", "".join(f"{n}!\n" for n in range(100))).write("c.txt", "C\n").commit("head")
    with GitReader(repo.git_dir) as reader:
        diff = commit_diff(reader, base, head)
        assert [(file.path, file.status) for file in diff.files] == [
            ("a.txt", "type changed"), ("b.txt", "modified"), ("c.txt", "modified")]
        assert [line.kind for line in diff.files[0].hunks[0].lines] + [line.kind for line in diff.files[0].hunks[1].lines] == [
            "removed", "added", "note"]
        cut = commit_diff(reader, base, head, max_lines=50)
    assert cut.files_cut == 1 and cut.files[1].hunks and not cut.files[2].hunks
    assert commit_diff(GitReader(repo.git_dir), head, head).files == []
