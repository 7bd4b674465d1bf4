"""Re-verifying a pull request's findings at a commit and storing what was found.

The checks themselves are plain Python (`engine.verification`); this package maps models onto
them, writes one Verification per finding per commit (an upsert, so a re-run or a duplicated task
replaces rather than duplicates), and applies the rules that keep machines from overriding people.

- `run`: verifying a pull request at a commit, and carrying out a verification run
- `rows`: what verification loads of findings and evidence, and the outcome of checking them
- `checking`: one evidence row checked with the engine at a commit
- `store`: storing verdicts and results (upserts), and flagging regressions
- `evidence_check`: the editor's check of one evidence item, storing nothing
"""
