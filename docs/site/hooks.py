"""mkdocs hooks of the site (mkdocs.yml: hooks): every figure a page shows is a link to its PNG
at full size. The figures are drawn about 1,900 px wide and shown at the page's width (a third
to a half of that on a laptop, less on a phone), where a legend is read only full size."""

from __future__ import annotations

import re

#: An <img> of a page, with the link it may already sit in (then it is left as it is).
IMAGE = re.compile(r'(<a\b[^>]*>\s*)?(<img\b[^>]*?\bsrc="([^"]+)"[^>]*>)')


def linked_images(html: str) -> str:
    """``html`` with every image not already in a link wrapped in one to its own file.

    >>> linked_images('<p><img src="HE-S2.png" /></p>')
    '<p><a href="HE-S2.png" title="the figure at full size"><img src="HE-S2.png" /></a></p>'
    >>> linked_images('<a href="x.png"><img src="x.png"></a>')
    '<a href="x.png"><img src="x.png"></a>'
    """

    def link(match: re.Match) -> str:
        if match.group(1):
            return match.group(0)
        return f'<a href="{match.group(3)}" title="the figure at full size">{match.group(2)}</a>'

    return IMAGE.sub(link, html)


def on_page_content(html: str, **kwargs) -> str:
    """mkdocs' hook on a page's HTML, before the theme wraps it: its images linked."""
    return linked_images(html)
