"""GitLab: its REST client, the merge request, push and note hooks, the commit status and note it
sends, its merge requests' discussions, and the `Forge` it registers (`integration`). Nothing here
is imported by `forge.github`, nor by the outbox or the threads, which reach GitLab through
`forge.interface`."""
