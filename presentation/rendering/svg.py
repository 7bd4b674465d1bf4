"""Building SVG pictures as XML trees, so every label and attribute is escaped by the serialiser.

Pictures carry text from reviews and repositories (commit subjects, paths, branch names); writing
them into markup by hand would let one `<` or `"` break the picture or inject into the page. Here
the text only ever becomes an ElementTree text node or attribute value, and only the serialised
tree is marked safe."""
import re
from xml.etree import ElementTree

from django.utils.safestring import SafeString, mark_safe

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
# XML 1.0 cannot carry these at all, escaped or not: a stray one would make the picture unparseable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value) -> str:
    return _NOT_XML.sub("\ufffd", str(value))


class Svg:
    """One picture: `role="img"`, labelled by its <title> and described by its <desc>, the text
    alternative a screen reader reads instead of the drawing."""

    def __init__(self, *, width: int, height: int, title: str, description: str, id_prefix: str, css_class: str,
                 role: str = "img"):
        self.id_prefix = id_prefix
        self.root = ElementTree.Element(
            "svg",
            {
                "xmlns": SVG_NAMESPACE,
                "viewBox": f"0 0 {width} {height}",
                "width": str(width),
                "height": str(height),
                # A picture with links in it is a group: inside an image (whose parts are
                # presentational) a link could not be reached by a screen reader's user.
                "role": role,
                "class": css_class,
                "aria-labelledby": f"{id_prefix}-title {id_prefix}-desc",
            },
        )
        self.add("title", text=title, id=f"{id_prefix}-title")
        self.add("desc", text=description, id=f"{id_prefix}-desc")

    def add(self, tag: str, parent: ElementTree.Element | None = None, *, text=None, **attributes):
        """Append `<tag>` (to `parent`, else the root). Attribute names use `_` for `-`
        (`font_size` is `font-size`); a trailing `_` is dropped (`class_`)."""
        element = ElementTree.SubElement(
            self.root if parent is None else parent,
            tag,
            {name.rstrip("_").replace("_", "-"): _text(value) for name, value in attributes.items() if value is not None},
        )
        if text is not None:
            element.text = _text(text)
        return element

    def markup(self) -> SafeString:
        return mark_safe(ElementTree.tostring(self.root, encoding="unicode"))
