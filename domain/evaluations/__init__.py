"""Evaluations: a model (the base, or the base with a run's adapter) scored on test examples."""
