"""Pure functions of deliberation: replies parsed, anonymity, tallies, claims, moot's finding."""
