"""How a place in a repository is written."""

# --- Places -------------------------------------------------------------------------------------


def location(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    """`path:40–42`, `path:40`, or the path alone."""
    if not path:
        return ""
    if start_line and end_line and end_line != start_line:
        return f"{path}:{start_line}–{end_line}"
    if start_line:
        return f"{path}:{start_line}"
    return path
