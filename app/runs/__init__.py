"""Runs: the list, the Configure form, the run page with its live parts, and the runs API."""
