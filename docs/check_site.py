"""The built site as a reader sees it (`make docs-check`): serve SITE on localhost, open a claim
page and a derivation page in headless Chromium, save their screenshots in OUT, and check that
every formula was rendered by KaTeX (no raw ``\\(`` or ``\\[`` left in the page's text) and that
every image the pages show loads. Exit 0 when all hold (or, saying so, when Chromium is not
installed), 1 otherwise.

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

# page -> the screenshot's height in pixels: a claim page whole, down to its verdicts and figures
PAGES = {"claims/HE-P4.1/": 7200, "derivations/manifold/": 1800, "findings-explained/": 1800,
         "paper/": 2400, "paper/cpu-1/report/": 1800, "api/": 1800, "api/theory/": 1800}
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
    """The ``src`` of every <img> of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.sources += [value for name, value in attrs if name == "src"]


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def main(site: Path, out: Path) -> int:
    browser = chromium()
    if browser is None:
        print("docs-check: Chromium is not installed (apt install chromium); not checked")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    handler = functools.partial(Quiet, directory=str(site))
    server = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems = []
    try:
        with tempfile.TemporaryDirectory() as profile:
            run = [browser, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000"]
            for page, height in PAGES.items():
                url = base + page
                dom = subprocess.run([*run, "--dump-dom", url], capture_output=True, text=True,
                                     timeout=120).stdout  # fmt: skip
                name = page.strip("/").replace("/", "-")
                subprocess.run([*run, f"--window-size=1280,{height}",
                                f"--screenshot={out / name}.png", url],
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
                print(f"docs-check: {page}: {rendered} formulas rendered, {len(raw)} raw, "
                      f"{len(images.sources)} images; screenshot {out / name}.png")  # fmt: skip
    finally:
        server.shutdown()
    for problem in problems:
        print(f"docs-check: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
