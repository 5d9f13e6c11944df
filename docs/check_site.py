"""The built site as a reader sees it (`make docs-check`): serve SITE on localhost, open the home
page, claim pages of both papers, the gallery, a derivation and the API reference in headless
Chromium, save their screenshots in OUT (desktop and phone width), and check that
every formula was rendered by KaTeX (no raw ``\\(`` or ``\\[`` left in the page's text) and that
every image the pages show loads; and, in every page of the site, that each link and image
inside the site points at a file it holds. Exit 0 when all hold (the browser's checks skipped,
saying so, when Chromium is not installed), 1 otherwise.

    python docs/check_site.py site build/docs-check
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

# page -> the screenshots' heights in pixels, in a desktop window 1280 px wide and a phone's
# 390 px (None: none on a phone): a claim page whole, down to its verdicts and figures
PAGES = {"": (1800, 2400), "claims/": (1800, 2400), "claims/HE-P4.1/": (5600, 9000),
         "claims/CZZ-HEADS/": (5600, 9000), "gallery/": (1200, 1600),
         "gallery/tutorial/": (5200, 9000), "derivations/manifold/": (1800, None),
         "findings-explained/": (1800, None), "paper/": (2400, None),
         "paper/cpu-1/report/": (1800, None), "api/": (1800, 3600), "api/theory/": (1800, None)}
WIDTHS = {"": 1280, "-phone": 390}  # screenshot name suffix -> window width
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")  # fmt: skip


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no line per request
        pass


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # a browser closing early
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Images(HTMLParser):
    """The ``src`` of every <img> of a page, and every ``href`` of its links."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.sources += [value for name, value in attrs if name == "src"]
        elif tag == "a":
            self.links += [value for name, value in attrs if name == "href" and value]


def broken_links(site: Path) -> list[str]:
    """Every link and image of every page of ``site`` that points inside the site at a file it
    does not hold (a folder's link answered by its index.html), as "page: target"; the 404
    page's links are absolute to a server root and not followed."""
    broken = []
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html":
            continue
        parser = Images()
        parser.feed(page.read_text(encoding="utf-8"))
        for target in parser.links + parser.sources:
            parts = urllib.parse.urlsplit(target)
            if parts.scheme or parts.netloc or not parts.path:  # elsewhere, or this page
                continue
            path = (page.parent / urllib.parse.unquote(parts.path)).resolve()
            if not (path.is_file() or (path / "index.html").is_file()):
                broken.append(f"{page.relative_to(site)}: {target}")
    return broken


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def main(site: Path, out: Path) -> int:
    broken = broken_links(site)
    pages = len(list(site.rglob("*.html")))
    print(f"docs-check: {pages} pages, {len(broken)} links or images to a missing file")
    for link in broken:
        print(f"docs-check: broken: {link}", file=sys.stderr)
    browser = chromium()
    if browser is None:
        print("docs-check: Chromium is not installed (apt install chromium); not checked")
        return 1 if broken else 0
    out.mkdir(parents=True, exist_ok=True)
    handler = functools.partial(Quiet, directory=str(site))
    server = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems = []
    try:
        with tempfile.TemporaryDirectory() as profile:
            run = [browser, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000"]
            for page, heights in PAGES.items():
                url = base + page
                dom = subprocess.run([*run, "--dump-dom", url], capture_output=True, text=True,
                                     timeout=120).stdout  # fmt: skip
                name = page.strip("/").replace("/", "-") or "home"
                for (suffix, width), height in zip(WIDTHS.items(), heights, strict=True):
                    if height:
                        subprocess.run([*run, f"--window-size={width},{height}",
                                        f"--screenshot={out / name}{suffix}.png", url],
                                       capture_output=True, timeout=120)  # fmt: skip
                text = re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style|code).*?</\1>", " ", dom,
                                                      flags=re.S))  # fmt: skip
                rendered = dom.count('class="katex"')
                raw = re.findall(r"\\\(|\\\[|\$\$", text)
                if "arithmatex" in dom and (raw or not rendered):
                    problems.append(f"{page}: {len(raw)} raw formulas, {rendered} rendered")
                images = Images()
                images.feed(dom)
                for source in images.sources:
                    try:
                        with urllib.request.urlopen(urllib.parse.urljoin(url, source)) as reply:
                            ok = reply.status == 200 and reply.read(8).startswith(b"\x89PNG")
                    except OSError:
                        ok = False
                    if not ok:
                        problems.append(f"{page}: image {source} does not load")
                print(f"docs-check: /{page}: {rendered} formulas rendered, {len(raw)} raw, "
                      f"{len(images.sources)} images; screenshots {out / name}*.png")  # fmt: skip
    finally:
        server.shutdown()
    for problem in problems:
        print(f"docs-check: {problem}", file=sys.stderr)
    return 1 if problems or broken else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
