"""Safe, fast access to git repositories (plain Python, git CLI only).

    from engine.git import GitReader, fetch_mirror, mirror_dir_for

    result = fetch_mirror(url=url, mirror_dir=mirror_dir_for(root, "owner/name"),
                          allow_local=False, pr_number=12)
    with GitReader(result.mirror_dir) as reader:
        blob = reader.read_blob(reader.resolve("abc1234"), "src/app.py")
"""

from engine.git.globs import glob_matcher, is_glob, match_paths
from engine.git.mirror import FetchResult, fetch_mirror, mirror_dir_for, mirror_holds
from engine.git.objects import Blob, Change, CommitInfo, TreeEntry, split_lines
from engine.git.reader import GitReader
from engine.git.safety import (
    validate_clone_url,
    validate_glob,
    validate_repo_path,
    validate_revision,
    validate_slug,
)

__all__ = [
    "Blob",
    "Change",
    "CommitInfo",
    "FetchResult",
    "GitReader",
    "TreeEntry",
    "fetch_mirror",
    "glob_matcher",
    "is_glob",
    "match_paths",
    "mirror_dir_for",
    "mirror_holds",
    "split_lines",
    "validate_clone_url",
    "validate_glob",
    "validate_repo_path",
    "validate_revision",
    "validate_slug",
]
