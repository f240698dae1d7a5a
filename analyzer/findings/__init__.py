"""Findings: what the writes mean, in numbers and in words: statistics, log switches, the timeline of
events, comparisons with the companion inputs, insights and recommendations, inventory, redaction."""
