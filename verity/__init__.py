"""Verity: the wiring room. Configuration from the environment and the `verity` command line."""
