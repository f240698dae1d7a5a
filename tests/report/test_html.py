"""The HTML report: self-contained (no request to another host), plots and tables present, usable when large."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from analyzer.api import Analysis
from analyzer.report.html import render_html
from analyzer.report.plots import PER_WRITE
from tests.conftest import invoke
from tests.write_rows import many

PLOTS = ("timeline", "histogram", "top")
VERDICT = (
    "Isolated outliers: 54% of slow-write time (2 writes &gt;= 100 ms) was standby I/O (RFS write); network 46%,"
    " other RFS time 0%."
)
#: attributes through which a page could make the browser fetch something
URL_ATTRIBUTES = {"src", "href", "action", "formaction", "poster", "data", "srcset", "background", "manifest"}


class Page(HTMLParser):
    """Tags, URL-like attributes, scripts and element ids of an HTML page (script bodies are data here)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[tuple[str, str, str]] = []
        self.ids: dict[str, str] = {}
        self.scripts: list[str] = []
        self.meta: list[dict[str, str | None]] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.urls += [(tag, k, v or "") for k, v in attrs if k in URL_ATTRIBUTES]
        if values.get("id"):
            self.ids[values["id"] or ""] = values.get("class") or ""
        if tag == "meta":
            self.meta.append(values)
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The paper sample's HTML report, written by the command line."""
    target = tmp_path_factory.mktemp("html") / "incident.html"
    invoke(["analyze", "samples/paper-2014", "--tz", "-07:00", "--format", "html", "--output", str(target)])
    return target


@pytest.fixture(scope="module")
def page(report: Path) -> tuple[str, Page]:
    text = report.read_text(encoding="utf-8")
    parser = Page()
    parser.feed(text)
    return text, parser


def test_no_reference_to_another_host(page: tuple[str, Page]) -> None:
    text, parsed = page
    assert parsed.urls == []  # no src, href, ... at all: nothing to fetch, nothing to follow
    assert all(not s.lstrip().startswith("http") for s in parsed.scripts)
    csp = [m["content"] for m in parsed.meta if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in (csp[0] or "")  # the browser refuses any request the page would make
    body = text[text.index("</head>") :]
    assert "http://" not in body and "https://" not in body  # outside the inlined library: no URL at all
    assert '"showSendToCloud": false' in body  # no "Share chart" button that would upload the data


def test_plotly_is_inlined_once(page: tuple[str, Page]) -> None:
    _, parsed = page
    library = [s for s in parsed.scripts if "plotly.js v" in s[:200]]
    assert len(library) == 1 and len(library[0]) > 1_000_000


def test_plots_and_sections_are_present(page: tuple[str, Page]) -> None:
    text, parsed = page
    for plot in PLOTS:
        assert "plotly-graph-div" in parsed.ids[plot]
        assert re.search(rf'Plotly\.newPlot\(\s*"{plot}",', text), plot
    for heading in ("Facts", "Recommendations", "Timeline", "Log switches", "Percentiles (ms)", "Verdicts"):
        assert f"<h2>{heading}</h2>" in text
    warnings = "LGWR warnings (long writes, broadcast waits)"
    for heading in (warnings, "Unmatched messages", "Unparsed lines", "Notes and caveats", "Files"):
        assert f"<h2>{heading}</h2>" in text
    assert "<p>Every message found its partner.</p>" in text
    histogram = text[text.index("<h2>Histogram (writes per bucket, as V$EVENT_HISTOGRAM)</h2>") :]
    histogram = histogram[: histogram.index("</section>")]  # the plot, then the buckets as a table
    assert histogram.index('id="histogram"') < histogram.index('<th class="num">rfs_io</th>')
    assert '<td>&lt;256 ms</td><td class="num">2</td>' in histogram


def test_verdict_top_writes_and_recommendations(page: tuple[str, Page]) -> None:
    text, parsed = page
    assert f'<p class="verdict">{VERDICT}</p>' in text
    assert "<td>2014-12-02 15:46:34.598000</td>" in text
    assert "prim01/<wbr>diag/<wbr>rdbms/<wbr>boston/<wbr>boston1/<wbr>trace/<wbr>boston1_nss2_4401.trc:101<br>" in text
    assert "chicago1_rfs_8802.trc:143" in text
    assert {"rec-standby-io-outliers", "rec-network-stalls"} <= set(parsed.ids)
    assert "rec-fast-sync" not in parsed.ids  # 11.2: Fast Sync is a note, not a recommendation
    assert "<td>Oracle versions</td><td>11.2.0.4.0</td>" in text
    assert '"log switch"' not in text and '"LGWR warning"' in text  # the sample has warnings, no switch


def test_missing_plotly_is_a_one_line_usage_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in [m for m in sys.modules if m == "plotly" or m.startswith("plotly.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "plotly", None)
    result = invoke(["analyze", "samples/paper-2014", "--format", "html", "-o", str(tmp_path / "x.html")], code=2)
    assert result.stderr.strip().splitlines() == [
        "dgtrace: error: --format html needs plotly: pip install 'dgtrace[html]'"
    ]


def test_large_report_stays_small(paper: Analysis, tmp_path: Path) -> None:
    """100,000 writes: the timeline is per time bucket, the slow writes as points, so the page stays
    a few hundred KB beyond plotly.js itself."""
    big = dataclasses.replace(paper, writes=many(100_000, 7_200.0))
    assert big.writes.height > PER_WRITE
    target = tmp_path / "big.html"
    with target.open("w", encoding="utf-8") as out:
        render_html(big, out, 10)
    text = target.read_text(encoding="utf-8")
    assert "100,000 matched writes per 30s: p50, p99 and max of the total" in text
    assert '"log switches per 30s"' in text and '"slow write: standby I\\u002fO (RFS write)"' in text
    library = len(_plotly_js_text())
    assert len(text) - library < 1_000_000


def _plotly_js_text() -> str:
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs())


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
def test_html_renders_in_chromium(report: Path, tmp_path: Path) -> None:
    """Headless Chromium with the network blocked: no console message, three plots drawn, a screenshot."""
    dom, stderr, shot = _chromium_run(report, tmp_path, 1400, 2000)
    console = [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert console == []  # no error, no warning, no refused request
    starts = [dom.index(f'id="{plot}"') for plot in PLOTS]
    for plot, start, end in zip(PLOTS, starts, [*starts[1:], len(dom)], strict=True):
        drawn = dom[start:end]
        assert 'class="plot-container plotly"' in drawn, plot
        assert drawn.count('class="main-svg"') >= 2, plot
        assert drawn.count('class="point"') >= 6, plot  # bars were drawn, not just axes
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000


def test_percentiles_as_awr_users_read_them(page: tuple[str, Page]) -> None:
    text, _ = page
    assert "<h2>Percentiles (ms)</h2>" in text
    header = '<th>component</th><th class="num">writes</th><th class="num">mean ms</th><th class="num">p50 ms</th>'
    assert header in text
    assert (
        '<td>rfs_io</td><td class="num">66</td><td class="num">3.378</td><td class="num">0.938</td>'
        '<td class="num">1.262</td><td class="num">1.471</td><td class="num">162.679</td>'
    ) in text


@pytest.mark.slow
def test_skipped_inputs_are_summarised_by_reason(tmp_path: Path) -> None:
    """3,000 `.trm` trace maps next to the traces: one row with the count, not 3,000."""
    folder = tmp_path / "upload"
    shutil.copytree("samples/paper-2014", folder)
    for n in range(3000):
        (folder / f"x_{n}.trm").write_bytes(b"\x00\x01")
    target = tmp_path / "r.html"
    invoke(["analyze", str(folder), "--tz", "-07:00", "--format", "html", "-o", str(target)])
    text = target.read_text(encoding="utf-8")
    assert "<h2>Inputs not read (3,000), by reason</h2>" in text
    assert text.count("x_1") < 3 and '<td class="num">3,000</td>' in text


def test_trace_text_is_escaped(tmp_path: Path) -> None:
    from tests.builders import ack, krs, send
    from tests.conftest import write

    host = "prim02<script>alert(6)</script>"
    lines = ["Trace file /u01/x/db1_nss2_1.trc", f"Node name:\t{host}", "", "*** 2014-12-02 08:46:34.000"]
    lines += [send(1), krs("2014-12-02 08:46:34.598", "5837 krsu.c"), krs("2014-12-02 08:46:34.600", "6058 krsu.c")]
    write(tmp_path / "<img src=x>" / "db1_nss2_1.trc", [*lines, ack(1)])
    target = tmp_path / "r.html"
    invoke(["analyze", str(tmp_path), "--format", "html", "-o", str(target)])
    text = target.read_text(encoding="utf-8")
    body = text[text.index("</head>") :]
    assert "<script>alert(6)" not in body and "<img src=x>" not in body
    assert "prim02&lt;script&gt;alert(6)&lt;/script&gt;" in body


def _chromium_run(page: Path, tmp_path: Path, width: int, height: int) -> tuple[str, str, Path]:
    """(DOM after the scripts ran, stderr, screenshot) of a page in headless Chromium, network blocked."""
    browser = _chromium()
    if browser is None:
        pytest.skip(
            "chromium not installed: no 'chromium' or 'chromium-browser' on PATH (Debian: apt-get install chromium)"
        )
    shot = tmp_path / "page.png"
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--proxy-server=127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=15000",
        f"--window-size={width},{height}",
        f"--screenshot={shot}",
        "--dump-dom",
        page.as_uri(),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout, run.stderr, shot


#: measures, once the page has loaded, what is wider than its box (written into the DOM for --dump-dom)
MEASURE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const wide = [...document.querySelectorAll(".scroll")].filter(e => e.scrollWidth > e.clientWidth + 1).length;
  document.body.dataset.pageOverflow = String(document.documentElement.scrollWidth > window.innerWidth);
  document.body.dataset.wideBoxes = String(wide);
}, 500));
</script></body>"""


@pytest.mark.slow
def test_a_large_set_in_chromium_at_1400_px(tmp_path: Path) -> None:
    """About 60,000 writes (with slow writes, LGWR warnings and log switches): the page stays small,
    the timeline is drawn per time bucket, no table or plot is wider than the 1400 px window, and the
    browser reports nothing."""
    from analyzer.simulate.options import SimOptions
    from analyzer.simulate.runner import simulate

    simulate(tmp_path / "set", SimOptions(scenario="mixed", size_bytes=50 << 20, seed=7))
    page = tmp_path / "big.html"
    invoke(["analyze", str(tmp_path / "set"), "--format", "html", "-o", str(page)])
    text = page.read_text(encoding="utf-8")
    assert len(text) < 6_000_000
    page.write_text(text.replace("</body>", MEASURE), encoding="utf-8")
    dom, stderr, shot = _chromium_run(page, tmp_path, 1400, 3000)
    assert [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line] == []
    assert 'data-page-overflow="false"' in dom and 'data-wide-boxes="0"' in dom
    timeline = dom[dom.index('id="timeline"') : dom.index('id="histogram"')]
    assert timeline.count('class="point"') < 5_000  # bars and points: a few thousand, not one per write
    assert "matched writes per" in dom and "slow writes per" in timeline
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
