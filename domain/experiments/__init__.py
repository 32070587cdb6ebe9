"""Experiments: measure the base model, train with RL, compare the two on the same test examples (000)."""
