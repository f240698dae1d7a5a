"""A small archive share, simulated once per session; tests that change it work on a copy (`one_day`, the
smaller share the command line's tests use too, is in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.batch.helpers import make_share


@pytest.fixture(scope="session")
def share_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 configurations with colliding msgid ranges, 3 days (the first two gzipped), alert logs,
    .trm maps and a foreground trace per host and day. Read-only: copy it to change it."""
    return make_share(tmp_path_factory.mktemp("share") / "share")
