"""A Griffe extension for the API pages: the doctest examples of the docstrings (``>>>`` lines
and their output, up to a blank line) become ``pycon`` code blocks, so they render as code
(not as text whose brackets read as links)."""

import griffe


def fenced(text: str) -> str:
    """``text`` with each doctest block fenced."""
    out, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith(">>>") or (block and line.strip()):
            block.append(line)
            continue
        if block:
            out += ["```pycon", *block, "```"]
            block = []
        out.append(line)
    return "\n".join(out[:-1])


class DoctestBlocks(griffe.Extension):
    def on_instance(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fenced(obj.docstring.value)
