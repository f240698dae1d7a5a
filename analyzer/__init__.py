"""dgtrace: explain slow Oracle Data Guard SYNC commits from event 16410 / 10046 traces."""

__version__ = "0.1.0"
