"""Where each gitlink item's submodule history is read: its repository (named by the evidence, or
found from `.gitmodules` at the commit and matched to a known repository or registered), the
branch pins are measured against, and a fetched mirror, fetched at most once per run."""
import logging

from engine.verification import SubmoduleSource
from core.errors import RecheckError
from engine.git import GitReader
from engine.git.submodules import Submodule, absolute_submodule_url, submodules_at
from reviews.mirrors import repository_fetch, repository_mirror_dir
from reviews.models import Repository
from reviews.services import repository_get_or_register

logger = logging.getLogger(__name__)


class SubmoduleMirrors:
    """The submodule repositories of one verification run. With `fetch`, each is fetched once
    (the first time an item needs it) and a failure is remembered as that repository's problem;
    without, the mirrors are read as they are, and each source says when its mirror was last
    fetched (`branches_read` lists them for the run's result)."""

    def __init__(self, *, fetch: bool) -> None:
        self.fetch = fetch
        self._problems: dict[int, str] = {}
        self._gitmodules: dict[str, dict[str, Submodule]] = {}
        self._by_url: dict[str, Repository] = {}
        self._by_id: dict[int, Repository] = {}
        # One source per repository and branch for the whole run, so its memo of histories is shared.
        self._sources: dict[tuple[int, str], SubmoduleSource] = {}
        self._read: dict[tuple[int, str], Repository] = {}

    def source(
        self, *, reader: GitReader, superproject: Repository, target: str, path: str,
        repository_id: int | None, branch: str,
    ) -> SubmoduleSource | None:
        """The SubmoduleSource for the gitlink at `path`, or None when no repository is known."""
        try:
            repository, declared_branch = self._repository(reader, superproject, target, path, repository_id)
        except RecheckError as error:
            return SubmoduleSource(label=path, branch=branch or "main", problem=str(error))
        if repository is None:
            return None
        branch = branch or declared_branch or repository.default_branch
        if (repository.pk, branch) not in self._sources:
            problem = self._fetched(repository)
            mirror = repository_mirror_dir(repository)
            if not problem and not (mirror / "HEAD").exists():
                problem = f"{repository.slug} has not been fetched yet; verify with fetching on"
            as_of = "" if self.fetch or repository.fetched_at is None else repository.fetched_at.isoformat()
            self._sources[repository.pk, branch] = SubmoduleSource(
                label=repository.slug, branch=branch, mirror_dir=str(mirror), problem=problem, as_of=as_of
            )
            self._read[repository.pk, branch] = repository
        return self._sources[repository.pk, branch]

    def branches_read(self) -> list[dict]:
        """Each submodule repository and branch the run read: whether it was fetched for the run
        and when its mirror was last fetched (what its copy of the branch head is as of)."""
        return [
            {
                "repository": repository.slug,
                "branch": branch,
                "fetched": self.fetch and not self._problems.get(repository.pk),
                "fetched_at": repository.fetched_at,
            }
            for (_, branch), repository in self._read.items()
        ]

    def _repository(self, reader, superproject, target, path, repository_id) -> tuple[Repository | None, str]:
        declared = self._declared(reader, target).get(path)
        if repository_id is not None:
            if repository_id not in self._by_id:
                self._by_id[repository_id] = Repository.objects.get(pk=repository_id)
            return self._by_id[repository_id], declared.branch if declared else ""
        if declared is None:
            return None, ""
        url = absolute_submodule_url(declared.url, superproject_url=superproject.clone_url)
        # `branch = .` in .gitmodules means "the superproject's branch": no reference of its own.
        branch = "" if declared.branch == "." else declared.branch
        if url not in self._by_url:
            # A submodule of a private repository is registered private: its code is the team's too.
            self._by_url[url] = repository_get_or_register(clone_url=url, visibility=superproject.visibility)
        return self._by_url[url], branch

    def _declared(self, reader: GitReader, target: str) -> dict[str, Submodule]:
        if target not in self._gitmodules:
            self._gitmodules[target] = submodules_at(reader, target)
        return self._gitmodules[target]

    def _fetched(self, repository: Repository) -> str:
        if not self.fetch:
            return ""
        if repository.pk not in self._problems:
            try:
                repository_fetch(repository=repository)
                self._problems[repository.pk] = ""
            except RecheckError as error:
                logger.warning("Fetching submodule repository %s failed: %s", repository.slug, error)
                self._problems[repository.pk] = f"{repository.slug} could not be fetched: {error}"
        return self._problems[repository.pk]
