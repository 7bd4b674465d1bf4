"""Turning stored text into HTML: Markdown through a parser and a sanitiser, code through pygments.
Templates mark as safe only what these helpers return."""
