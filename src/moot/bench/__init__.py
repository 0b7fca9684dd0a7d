"""`moot bench`: does a protocol beat a majority vote at equal cost? Suites and statistics.

Suites of questions with known answers, and the statistics that say whether a protocol beats a
majority vote at equal cost (issue 16)."""
