"""--redact: no host, database or instance name, path or SQL text of the traces in any format or table;
the same pseudonym everywhere; the numbers kept; the mapping only when asked."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli import app
from analyzer.report.formats import CsvTable
from analyzer.simulate.options import SimOptions
from analyzer.simulate.runner import simulate
from tests.conftest import write

#: what the simulator names its hosts, databases and instances
NAMES = ["prim01", "prim02", "stby01", "dbnet.example", "salesdr1", "sales1", "sales2", "salesdr", "sales"]


@pytest.fixture(scope="module")
def upload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated 11.2 set (LGWR warnings, negative components) with an unparsed line holding SQL."""
    root = tmp_path_factory.mktemp("customer-acme") / "case-4711"
    simulate(root / "set", SimOptions(scenario="mixed", format_version="11.2", writes=600, seed=4))
    rfs = next((root / "set").rglob("*_rfs_*.trc"))
    with rfs.open("a", encoding="utf-8") as f:  # a broken WAIT line quoting a statement
        f.write("WAIT #0: nam='select secret_column from acme.payroll' ela= x\n")
    return root / "set"


def _run(args: list[str]) -> str:
    result = CliRunner(env={"COLUMNS": None, "NO_COLOR": "1"}).invoke(app, ["analyze", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _outputs(upload: Path, tmp_path: Path) -> dict[str, str]:
    base = [str(upload), "--tz", "-07:00", "--redact"]
    outputs = {f"csv {t}": _run([*base, "--format", "csv", "--table", t.value]) for t in CsvTable}
    outputs |= {f: _run([*base, "--format", f]) for f in ("json", "markdown")}
    outputs["text 80"] = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["analyze", *base]).stdout
    outputs["text"] = _run(base)
    page = tmp_path / "r.html"
    _run([*base, "--format", "html", "-o", str(page)])
    html = page.read_text(encoding="utf-8")
    outputs["html"] = html[html.index("</head>") :]  # after the inlined plotly.js library
    return outputs


@pytest.mark.slow
def test_nothing_of_the_traces_leaks_into_any_format(upload: Path, tmp_path: Path) -> None:
    secrets = [*NAMES, str(upload.parent), "customer-acme", "case-4711", "payroll", "secret_column", "/u01/"]
    plain = _run([str(upload), "--tz", "-07:00", "--format", "json"])
    assert all(s.lower() in plain.lower() for s in secrets if s != "/u01/")  # all there without --redact
    for name, text in _outputs(upload, tmp_path).items():
        found = [s for s in secrets if s.lower() in text.lower()]
        assert found == [], (name, found)


@pytest.mark.slow
def test_the_same_pseudonyms_everywhere_and_the_numbers_kept(upload: Path, tmp_path: Path) -> None:
    plain = json.loads(_run([str(upload), "--tz", "-07:00", "--format", "json"]))
    redacted = json.loads(_run([str(upload), "--tz", "-07:00", "--format", "json", "--redact"]))
    keep = ("thread", "seq", "msgid", "sent_at", "total_ms", "network_ms", "rfs_io_ms", "rfs_other_ms", "verdict")
    assert [[w[k] for k in keep] for w in plain["writes"]] == [[w[k] for k in keep] for w in redacted["writes"]]
    hosts = {(w["primary_host"], w["standby_host"]) for w in redacted["writes"]}
    assert hosts == {("host-1", "host-3"), ("host-2", "host-3")}
    files = {w["primary_file"] for w in redacted["writes"]} | {w["standby_file"] for w in redacted["writes"]}
    assert all(f.startswith(("host-1/inst-", "host-2/inst-", "host-3/inst-")) for f in files), files
    rows = list(csv.DictReader(io.StringIO(_run([str(upload), "--tz", "-07:00", "--format", "csv", "--redact"]))))
    assert {r["primary_file"] for r in rows} | {r["standby_file"] for r in rows} == files
    text = _run([str(upload), "--tz", "-07:00", "--redact"])
    assert "primary host-1, host-2; standby host-3" in text
    assert [c["standby_host"] for c in redacted["summary"]["clock"]] == ["host-3", "host-3"]
    assert all(line["text"] == "[removed by --redact]" for f in redacted["coverage"] for line in f["unparsed_lines"])
    assert any(f["unparsed_lines"] for f in redacted["coverage"])


def test_the_mapping_only_when_asked(upload: Path, tmp_path: Path) -> None:
    mapping = tmp_path / "map.json"
    out = _run([str(upload), "--redact", "--redact-map", str(mapping), "--format", "json"])
    names = json.loads(mapping.read_text(encoding="utf-8"))
    assert names["hosts"] == {
        "host-1": "prim01.dbnet.example",
        "host-2": "prim02.dbnet.example",
        "host-3": "stby01.dbnet.example",
    }
    assert names["databases"] == {"db-1": "sales", "db-2": "salesdr"}
    assert names["instances"] == {"inst-1": "sales1", "inst-2": "sales2", "inst-3": "salesdr1"}
    assert "prim01" not in out
    result = CliRunner().invoke(app, ["analyze", str(upload), "--redact-map", str(mapping)])
    assert result.exit_code == 2 and "--redact-map needs --redact" in result.stderr


def test_host_options_are_redacted_too(upload: Path) -> None:
    doc = json.loads(
        _run([str(upload), "--redact", "--format", "json", "--tz", "stby01=-07:00", "--tz", "acmehost=+01:00"])
    )
    notes = " ".join(doc["summary"]["notes"])
    assert "acmehost" not in notes and "stby01" not in notes
    assert "--tz unknown-host-1=+01:00 named no host of the traces" in notes


def test_a_file_named_like_no_trace_gets_a_neutral_name(tmp_path: Path) -> None:
    from tests.builders import ack, krs, send

    lines = ["*** 2014-12-02 08:46:34.000", send(1), krs("2014-12-02 08:46:34.598", "5837 krsu.c")]
    lines += [krs("2014-12-02 08:46:34.600", "6058 krsu.c"), ack(1)]
    write(tmp_path / "acme-payroll-incident.trc", lines)
    out = _run([str(tmp_path), "--redact", "--format", "json"])
    assert "acme" not in out and "payroll" not in out
    assert json.loads(out)["files"][0]["file"] == "file-1.trc"


def test_a_share_of_configurations_leaks_no_database_name(tmp_path: Path) -> None:
    """Two configurations over two days: configuration, database and link names are pseudonyms too."""
    from analyzer.simulate import ShareOptions, simulate_share

    simulate_share(tmp_path / "share", ShareOptions(configs=2, days=1, writes=40, threads=1, extras=False))
    plain = _run([str(tmp_path / "share"), "--format", "json"])
    redacted = _run([str(tmp_path / "share"), "--format", "json", "--redact"])
    doc = json.loads(redacted)
    assert "hrdr" in plain and "salesdr" in plain
    for secret in ("sales", "hrdr", "prim01", "stby01", str(tmp_path)):
        assert secret not in redacted, secret
    assert sorted(c["name"] for c in doc["summary"]["configurations"]) == ["db-1", "db-3"]


@pytest.mark.slow
def test_the_names_of_companion_files_and_reports_are_redacted(upload: Path, tmp_path: Path) -> None:
    """An AWR report names its database, instance and host; a pasted oratcptest command names hosts."""
    fixtures = Path("tests/fixtures")
    base = [str(upload), "--tz", "-07:00", "--redact", "--redact-map", str(tmp_path / "map.json")]
    base += ["--awr", str(fixtures / "awr" / "awr-19c-primary.txt")]
    base += ["--baseline", str(fixtures / "oratcptest" / "sync-disk-write.txt")]
    for output_format in ("json", "markdown", "text"):
        text = _run([*base, "--format", output_format])
        for secret in ("ORBIT", "orbit1", "dbprim01", "dbstby01", "awr-19c-primary", "sync-disk-write", "fixtures"):
            assert secret.lower() not in text.lower(), (output_format, secret)
    doc = json.loads(_run([*base, "--format", "json"]))
    (report,) = doc["summary"]["awr"]
    mapping = json.loads((tmp_path / "map.json").read_text(encoding="utf-8"))
    assert mapping["hosts"][report["host"]] == "dbprim01" and mapping["databases"][report["db_name"]] == "orbit"
    assert mapping["files"][report["file"]].endswith("awr-19c-primary.txt")
    (run,) = doc["summary"]["baseline"]["runs"]
    assert run["latency_ms"] == 1.402 and run["file"] in mapping["files"]


@pytest.mark.slow
def test_the_alert_logs_destinations_leak_no_name(tmp_path: Path) -> None:
    """Alert logs name their database, instance, host and each destination's service: all pseudonyms,
    in every format (the destinations table included)."""
    simulate(tmp_path / "set", SimOptions(format_version="19c", writes=200, seed=5, extras=True))
    assert list((tmp_path / "set").rglob("alert_*.log"))
    plain = _run([str(tmp_path / "set"), "--format", "json"])
    assert json.loads(plain)["summary"]["destinations"], "the alert logs set destinations"
    secrets = ["prim01", "prim02", "stby01", "salesdr", "sales1", str(tmp_path)]
    assert all(s in plain for s in secrets)
    for fmt in ("json", "markdown", "text", "csv"):
        out = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(
            app, ["analyze", str(tmp_path / "set"), "--redact", "--format", fmt]
        )
        assert out.exit_code == 0, out.output
        found = [s for s in secrets if s.lower() in out.stdout.lower()]
        assert found == [], (fmt, found)
