"""`moot bench`: suites of questions with known answers and the statistics that say whether a
protocol beats a majority vote at equal cost (issue 16)."""
