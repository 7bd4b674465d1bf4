"""A pull request's review state: derived once from the stored facts (`derivation`, plain Python),
stored with the PR's generation and read by every interface (`stored`)."""
