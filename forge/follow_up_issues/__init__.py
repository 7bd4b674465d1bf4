"""A GitHub issue per follow-up, for repositories that opt in: the setting, the issue as Recheck
knows it, the calls that keep it in step, and its history. Sending them is `forge.github.issues`."""
