"""ORA- codes of the alert logs by what they mean: transport, apply, archiving, an operator's request."""

from __future__ import annotations

import pytest

from analyzer.base.oracodes import CODES, ERROR_EVENTS, ErrorClass, error_class


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("ORA-16198", ErrorClass.TRANSPORT),
        ("ORA-16086", ErrorClass.TRANSPORT),
        ("ORA-03135", ErrorClass.TRANSPORT),
        ("ORA-12541", ErrorClass.TRANSPORT),  # Oracle Net: every 12xxx
        ("ora-16191", ErrorClass.TRANSPORT),
        ("ORA-16037", ErrorClass.OPERATOR),  # managed recovery cancelled by a user
        ("ORA-16014", ErrorClass.ARCHIVING),  # no archive destination left
        ("ORA-16016", ErrorClass.APPLY),
        ("ORA-16999", ErrorClass.OTHER),
        (None, ErrorClass.TRANSPORT),  # `Destination LOG_ARCHIVE_DEST_2 is UNSYNCHRONIZED`
    ],
)
def test_each_code_has_its_class(code: str | None, expected: ErrorClass) -> None:
    assert error_class(code) is expected


def test_event_kinds_and_the_table() -> None:
    assert ErrorClass.TRANSPORT.event == "transport_error"
    assert ErrorClass.OPERATOR.event == "operator_action"
    assert set(ERROR_EVENTS) == {
        "transport_error",
        "apply_error",
        "archiving_error",
        "operator_action",
        "other_error",
    }
    assert all(code.startswith("ORA-") and len(code) == 9 for code in CODES)
