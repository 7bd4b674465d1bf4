"""The browsable site: the index, the three companion pages of a pull request and a finding's
page. The same page builders feed the live views and the static companion render."""
