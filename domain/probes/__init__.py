"""Reward probes: a reward tried on a few prompts' sampled answers, to see whether a run would learn from it."""
