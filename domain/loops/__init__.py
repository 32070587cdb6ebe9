"""Automated training loops (001): RL rounds, each benchmarked, until a stop rule says enough."""
