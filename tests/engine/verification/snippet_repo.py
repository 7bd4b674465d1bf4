"""A repository with a Python view whose two lines are the snippet the tests follow, and the
helpers that check a snippet in it."""
from engine.git import GitReader
from engine.verification import EvidenceSpec, check_evidence


VIEW = """\
import os


def handler(request):
    user = request.user
    path = request.GET["file"]
    return open(os.path.join(ROOT, path)).read()


def other():
    return None
"""
SNIPPET = '    path = request.GET["file"]\n    return open(os.path.join(ROOT, path)).read()'


def snippet(commit, path="app/views.py", start=6, end=7, text=SNIPPET):
    return EvidenceSpec("snippet", commit=commit, path=path, start_line=start, end_line=end, text=text)


def check(repo, spec, target, **reader_options):
    with GitReader(repo.git_dir, **reader_options) as reader:
        return check_evidence(reader, spec, target)

