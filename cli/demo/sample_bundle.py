"""The review of the sample's pull request #1 as a bundle: its findings, with evidence that quotes
the sample's files as they are at the commit pinned as reviewed."""
from cli.demo.sample_commits import GUARD_SNIPPET, SCRATCH_SNIPPET, SNIPPET_LINES, TOLERANCE_SNIPPET, ZSTANDARD_SNIPPET
from cli.demo.sample_repository import SampleRepository
from cli.demo.toolkit_repository import TOOLKIT_FEATURE, TOOLKIT_MAIN, toolkit_path

SLUG = "recheck-demo/sample"
TOOLKIT_SLUG = "recheck-demo/toolkit"
NUMBER = 1
# The sample's CI jobs, as its reports are recorded when the demo loads (`cli.demo.sample_ci`).
TESTS_CHECK = "unit-tests"
LINT_CHECK = "lint"
LIMITS_TEST = "tests/test_limits.py::test_every_reader_gives_up_on_a_broken_file"
# Where ruff reports the print call at the commit the review was written at.
PRINT_LINE = 23
REVIEWER_NOTE = "Sample data: the project, its people and this pull request are made up."


def sample_bundle(repository: SampleRepository) -> dict:
    """The review of the sample's PR #1, as a bundle. Evidence names no commit, so it is recorded
    at the commit pinned as reviewed."""
    commits = repository.commits
    toolkit = {"slug": TOOLKIT_SLUG, "clone_url": str(toolkit_path(repository.path)), "default_branch": "main"}

    def snippet(key: str, text: str, caption: str) -> dict:
        path, start, end = SNIPPET_LINES[key]["reviewed"]
        return {"kind": "snippet", "path": path, "start_line": start, "end_line": end, "text": text,
                "caption": caption}

    return {
        "repository": {"slug": SLUG, "clone_url": repository.clone_url, "default_branch": "main"},
        "pull_request": {
            "number": NUMBER,
            "title": "Stream chat transcripts from compressed JSONL (sample)",
            "state": "open",
            "before": (
                "**This is a sample.** Recheck builds it on first start in a small git repository on this "
                "machine, so that every part of the app can be tried offline. " + REVIEWER_NOTE + "\n\n"
                "sample-loader read plain JSONL files one record at a time, and stopped after 100 unreadable "
                "records in a row."
            ),
            "change": (
                "Adds a loader that streams chat transcripts from zstandard-compressed JSONL and splits them "
                "into user and assistant turns. It also moves the `vendor/toolkit` submodule and brings a "
                "scratch config along."
            ),
            "status": (
                "Sample data. The review was written at the first push. The branch was then rebased onto a "
                "newer main, which moved the evidence around (a licence header above the code, a module "
                "renamed, a block re-indented), and a later push fixed two of the six blockers. Compare the "
                "verdicts at the three pinned commits to see both."
            ),
        },
        "commits": [
            {"sha": commits["reviewed"], "role": "reviewed",
             "note": "The first push, which the review was written against."},
            {"sha": commits["rebased"], "role": "rebased",
             "note": "After the rebase onto the new main: the evidence has moved but is all still there."},
            {"sha": commits["head"], "role": "head", "note": "The latest push: two blockers fixed."},
        ],
        "findings": [
            {
                "number": 1, "kind": "blocker", "caught_by": "ci",
                "title": "The toolkit submodule points at a feature branch",
                "summary": "vendor/toolkit moves to a commit that is not on the toolkit's main branch.",
                "body": "Main pins the vendored toolkit to a commit on its main branch. This PR moves the pin "
                        "to the head of a feature branch, which the submodule check in CI refuses because it "
                        "is not a fast-forward: the move adds the feature branch's commits and drops the "
                        "validator fix that main had.",
                "fix": "Land the toolkit change on its main branch, then pin to that commit.",
                "location": {"path": "vendor/toolkit"},
                "evidence": [
                    {"kind": "gitlink", "path": "vendor/toolkit", "sha": TOOLKIT_FEATURE, "submodule": toolkit,
                     "caption": "The PR's pin; main pins " + TOOLKIT_MAIN[:12] + "."},
                    {"kind": "gitlink", "path": "vendor/toolkit", "sha": TOOLKIT_FEATURE, "submodule": toolkit,
                     "expect": "off_branch", "caption": "Not on the toolkit's main branch."},
                    {"kind": "gitlink", "path": "vendor/toolkit", "sha": TOOLKIT_FEATURE, "submodule": toolkit,
                     "expect": "not_fast_forward", "caption": "Moving from main's pin drops commits."},
                    {"kind": "note", "text": "The toolkit is a real repository built beside the sample, with a "
                                             "main line and a feature branch: its figures are git's own."},
                ],
            },
            {
                "number": 2, "kind": "blocker", "caught_by": "ci",
                "title": "A personal scratch config ships with the PR",
                "summary": "configs/jdoe-scratch.yaml points at one person's home directory.",
                "body": "The secrets scan flags the home-directory paths, and the file is of no use to anyone "
                        "else: it names a private dataset and turns debugging on.",
                "fix": "Delete the file.",
                "location": {"path": "configs/jdoe-scratch.yaml", "line": 3},
                "evidence": [
                    {"kind": "path", "path": "configs/jdoe-scratch.yaml", "expect": "exists",
                     "caption": "Still in the tree."},
                    snippet("scratch", SCRATCH_SNIPPET, "Paths into one person's home directory."),
                ],
            },
            {
                "number": 3, "kind": "blocker", "caught_by": "ci",
                "title": "The streaming loader has no tests",
                "summary": "Nothing exercises stream.py, and the coverage gate fails.",
                "body": "The PR adds a module of its own but no test file for it.",
                "fix": "Add tests/test_stream.py covering a good file, a bad record and a compressed file.",
                "evidence": [
                    {"kind": "path", "path": "tests/test_stream.py", "expect": "missing",
                     "caption": "No test file for the new module yet."},
                ],
            },
            {
                "number": 4, "kind": "blocker", "caught_by": "ci",
                "title": "A broken file never stops the run",
                "summary": "The failure tolerance is 0, which the loop treats as 'never stop'.",
                "body": "The check is `if MAX_CONSECUTIVE_FAILURES and failures > ...`, so 0 switches it off: "
                        "a file that cannot be parsed prints one line per record and the run goes on forever. "
                        "The reader in the same package stops after 100, and main's test that every reader "
                        "gives up on a broken file fails in CI.",
                "fix": "Use 100, as the reader does.",
                "location": {"path": "src/sampleloader/stream.py", "line": 5},
                "evidence": [
                    snippet("tolerance", TOLERANCE_SNIPPET, "The tolerance and the comment that justifies it."),
                    {"kind": "pattern", "path": "src/sampleloader/*.py",
                     "regex": r"^MAX_CONSECUTIVE_FAILURES\s*=\s*0\b", "expect": "present",
                     "caption": "A tolerance of 0 anywhere in the package."},
                    {"kind": "check", "check": TESTS_CHECK, "tests": [LIMITS_TEST],
                     "caption": "The sample's own test, run by the demo at each pinned commit."},
                ],
            },
            {
                "number": 5, "kind": "blocker", "caught_by": "none",
                "title": "A transcript that ends on a user turn crashes",
                "summary": "The guard allows an odd number of turn markers; the loop then reads past the end.",
                "body": "With three markers the guard passes and the loop reads `markers[3]`, which raises "
                        "IndexError. Scraped transcripts often end without an answer.",
                "fix": "Reject an odd count in the existing guard.",
                "location": {"path": "src/sampleloader/turns.py", "line": 7},
                "evidence": [
                    snippet("guard", GUARD_SNIPPET, "The guard that lets an odd count through."),
                    {"kind": "pattern", "path": "src/sampleloader/*.py", "regex": r"len\(markers\)\s*%\s*2",
                     "expect": "absent", "caption": "No check for an odd count yet."},
                ],
            },
            {
                "number": 6, "kind": "blocker", "caught_by": "none",
                "title": "Compressed input needs a package nobody installs",
                "summary": "stream.py imports zstandard, which pyproject.toml does not declare.",
                "body": "The import sits inside the function, so the run starts and dies with "
                        "ModuleNotFoundError at the first compressed file.",
                "fix": "Declare zstandard in pyproject.toml (or in an optional extra the loader names when it "
                       "is missing).",
                "location": {"path": "src/sampleloader/stream.py", "line": 9},
                "evidence": [
                    snippet("zstandard", ZSTANDARD_SNIPPET, "The import, only reached with a compressed file."),
                    {"kind": "pattern", "path": "pyproject.toml", "regex": "zstandard", "expect": "absent",
                     "caption": "Not declared as a dependency."},
                ],
            },
            {
                "number": 7, "kind": "cleanup",
                "title": "Bad records are reported with print",
                "summary": "Use the logging module so runs can filter and route the messages.",
                "evidence": [
                    {"kind": "pattern", "path": "src/sampleloader/*.py", "regex": r"^\s*print\(",
                     "expect": "present", "caption": "print calls in the package."},
                    {"kind": "check", "check": LINT_CHECK,
                     "results": [{"rule": "T201", "path": "src/sampleloader/stream.py", "start_line": PRINT_LINE}],
                     "caption": "The sample's own linter (ruff), run by the demo at each pinned commit."},
                ],
            },
            {
                "number": 8, "kind": "cleanup",
                "title": "No changelog entry",
                "summary": "The new loader deserves a line in CHANGELOG.md.",
                "evidence": [
                    {"kind": "path", "path": "CHANGELOG.md", "expect": "missing", "caption": "No changelog yet."},
                ],
            },
            {
                "number": 9, "kind": "cleanup",
                "title": "The loader's name does not say what it reads",
                "summary": "stream_records could be read_transcripts; a matter of taste, so only a note.",
                "evidence": [
                    {"kind": "note", "text": "Naming is for people to judge: nothing here can be checked "
                                             "against the code, so Recheck reports it as unverifiable."},
                ],
            },
        ],
    }
