"""Report stage: an `Analysis` for people (terminal, Markdown, HTML) and machines (JSON, CSV).

The registry of renderers by format is `analyzer.report.formats`.
"""
