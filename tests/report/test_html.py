"""The HTML report: self-contained (no request to another host), plots and tables present, usable when large."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from analyzer.api import Analysis, Options, analyze
from analyzer.report.html import MAX_BARS, render_html, timeline_points
from analyzer.schemas import WRITES
from analyzer.zones import TimeZones
from tests.conftest import invoke

PLOTS = ("timeline", "histogram", "top")
VERDICT = "54% of slow-write time (2 writes &gt;= 100 ms) was standby I/O (RFS write); network 46%, other RFS time 0%."
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
def paper() -> Analysis:
    return analyze(["samples/paper-2014"], Options(zones=TimeZones(default_min=-420)))


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
    for heading in ("Facts", "Recommendations", "Timeline", "Log switches", "Histogram", "Top 10 slowest writes"):
        assert f"<h2>{heading}</h2>" in text
    for heading in (
        "LGWR warnings (long writes, broadcast waits)",
        "Unmatched messages",
        "Unparsed lines",
        "Notes",
        "Files",
    ):
        assert f"<h2>{heading}</h2>" in text
    assert "<p>Every message found its partner.</p>" in text


def test_verdict_top_writes_and_recommendations(page: tuple[str, Page]) -> None:
    text, parsed = page
    assert f'<p class="verdict">{VERDICT}</p>' in text
    assert "<td>2014-12-02 15:46:34.598000</td>" in text
    assert "prim01/diag/rdbms/boston/boston1/trace/boston1_nss2_4401.trc:101<br>" in text
    assert "stby01/diag/rdbms/chicago/chicago1/trace/chicago1_rfs_8802.trc:143" in text
    assert {"rec-standby-redo-logs", "rec-fast-sync", "rec-network"} <= set(parsed.ids)
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


def _many_writes(count: int, seconds: float) -> pl.DataFrame:
    """`count` writes spread over `seconds`, one of them slow, on two threads with a log switch each."""
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    step = seconds / count
    data: dict[str, list[object]] = {
        "thread": [1 + i % 2 for i in range(count)],
        "seq": [10 + (i > count // 2) for i in range(count)],
        "msgid": list(range(count)),
        "oper": ["Write"] * count,
        "sent_at": [t0 + timedelta(seconds=i * step) for i in range(count)],
        "total_ms": [500.0 if i == 777 else 2.0 for i in range(count)],
        "rfs_ms": [1.0] * count,
        "network_ms": [1.0] * count,
        "rfs_io_ms": [499.0 if i == 777 else 0.5 for i in range(count)],
        "rfs_other_ms": [0.5] * count,
        "resolution_ms": [2.0] * count,
        "verdict": ["rfs_io" if i == 777 else "network" for i in range(count)],
        "slow": [i == 777 for i in range(count)],
        "matched": [True] * count,
        "rfs_io_waits": [1] * count,
        "warning": [None] * count,
        "primary_file": ["p.trc"] * count,
        "primary_line": list(range(count)),
        "standby_file": ["s.trc"] * count,
        "standby_line": list(range(count)),
        "primary_host": ["prim"] * count,
        "standby_host": ["stby"] * count,
    }
    return pl.DataFrame({name: data.get(name, [None] * count) for name in WRITES}, schema=WRITES)


def test_large_timelines_keep_the_slowest_write_of_each_bin() -> None:
    writes = _many_writes(20_000, 3_600.0)
    points, caption = timeline_points(writes)
    assert points.height <= MAX_BARS
    assert caption == "the slowest write of each 2s (20,000 writes)"
    assert points["in_bin"].sum() == 20_000
    assert points["total_ms"].max() == 500.0


def test_small_timelines_show_every_write() -> None:
    points, caption = timeline_points(_many_writes(100, 60.0))
    assert points.height == 100 and caption == "every matched write (100)"


def test_large_report_stays_small(paper: Analysis, tmp_path: Path) -> None:
    """100,000 writes: the page carries at most MAX_BARS bars, so it stays a few MB beyond plotly.js itself."""
    big = dataclasses.replace(paper, writes=_many_writes(100_000, 7_200.0))
    target = tmp_path / "big.html"
    with target.open("w", encoding="utf-8") as out:
        render_html(big, out, 10)
    text = target.read_text(encoding="utf-8")
    assert "the slowest write of each 5s (100,000 writes)" in text
    assert '"log switch"' in text
    assert len(text) < 12_000_000


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
def test_html_renders_in_chromium(report: Path, tmp_path: Path) -> None:
    """Headless Chromium with the network blocked: no console message, three plots drawn, a screenshot."""
    browser = _chromium()
    if browser is None:
        pytest.skip(
            "chromium not installed: no 'chromium' or 'chromium-browser' on PATH (Debian: apt-get install chromium)"
        )
    shot = tmp_path / "report.png"
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
        "--virtual-time-budget=5000",
        "--window-size=1400,2000",
        f"--screenshot={shot}",
        "--dump-dom",
        report.as_uri(),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert console == []  # no error, no warning, no refused request
    dom = run.stdout
    starts = [dom.index(f'id="{plot}"') for plot in PLOTS]
    for plot, start, end in zip(PLOTS, starts, [*starts[1:], len(dom)], strict=True):
        drawn = dom[start:end]
        assert 'class="plot-container plotly"' in drawn, plot
        assert drawn.count('class="main-svg"') >= 2, plot
        assert drawn.count('class="point"') >= 6, plot  # bars were drawn, not just axes
    assert shot.exists()
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000
