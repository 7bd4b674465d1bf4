"""What Recheck says, in words and pictures, for every interface that shows it: the companion
pages' objects, the sentences computed from the data, the pictures and charts, Markdown and
highlighting, and the static render of the companion pages. The site, the GitHub reports and the
commands read it; the domain never does."""
