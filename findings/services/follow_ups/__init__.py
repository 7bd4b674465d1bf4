"""Follow-ups: what a merged pull request left to do, checked on the repository's default branch.

- `opening`: a merged pull request's open cleanups, and its blockers dismissed, fixed anyway or
  still open, become follow-ups (once, however often the merge is reported)
- `checking`: checking them at the default branch's head with the verification engine, and what
  each check changes
- `sweeps`: asking for that check (a push, a merge, beat) and claiming it for a worker
- `decisions`: a person marks a follow-up fixed or closes it with a reason
"""
