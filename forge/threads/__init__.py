"""A pull or merge request's review threads as Recheck holds them, the same for every forge: the
inbox's models, reading it in step with the forge, triage, verdicts and the replies' rows. It
imports no forge: a forge answers in the plain values of `forge.threads.wire`."""
