"""Epochs 2 against Epochs 1 on the tiny model: the same seed, prompts, rounds and sampled answers, each round's
validation reward and seconds side by side, and what the second pass buys per sampled answer and per second.

    .venv/bin/python bench/epochs.py [--rounds 12] [--seeds 2] [--epochs 2] [--loss-type grpo]
                                     [--learning-rate 5e-4] [--model DIR]

The settings are bench/trainer_vs_trl.py's (16 prompts x 8 answers x up to 32 tokens, LoRA 16/32, learning rate
5e-4, gradient norm clipped to 1.0, clip range 0.2), validated greedily on 64 held-out Math Pairs prompts after
every round. Both runs sample the same number of answers each round, so a higher validation reward at an equal
round is more learned per sampled answer; the seconds say what the extra passes cost. Several seeds are averaged,
because one tiny-model run moves by a few points from round to round.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

# the settings both benches use (importing it puts the repository on the path)
from trainer_vs_trl import ensure_tiny_model, ours_records


def curve(records: list) -> tuple[list[float], list[float], list[float]]:
    """Validation reward by round (round 0 first), seconds per round (sampling + grading + update), and the share
    of tokens clipped per round (0 with one pass)."""
    validation = [r.validation_reward for r in records]
    trained = [r for r in records if r.round > 0]
    seconds = [r.seconds.sampling + r.seconds.grading + r.seconds.update for r in trained]
    clipped = [r.clipped or 0.0 for r in trained]
    return validation, seconds, clipped


def mean_curves(curves: list[list[float]]) -> list[float]:
    return [statistics.fmean(values) for values in zip(*curves, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--seeds", type=int, default=2, help="runs of each, seeds 0, 1, ... (averaged)")
    parser.add_argument("--epochs", type=int, default=2, choices=[2, 3, 4], help="against Epochs 1")
    parser.add_argument("--loss-type", default="grpo", choices=["grpo", "dapo", "dr_grpo"])
    parser.add_argument("--learning-rate", type=float, default=5e-4)
    parser.add_argument("--model", type=Path, default=None)
    args = parser.parse_args()

    from trainer.tiny_model import math_pairs_rows

    model_dir = ensure_tiny_model(args.model)
    rows = math_pairs_rows(seed=21, count=1024)
    validation_rows = math_pairs_rows(seed=22, count=64)

    results: dict[int, tuple[list[list[float]], list[list[float]], list[list[float]]]] = {}
    for epochs in (1, args.epochs):
        validations, seconds, clipped = [], [], []
        for seed in range(args.seeds):
            print(f"Epochs {epochs}, seed {seed} ...", file=sys.stderr, flush=True)
            records = ours_records(model_dir, rows, validation_rows, args.rounds, args.loss_type, epochs, seed,
                                   args.learning_rate)
            v, s, c = curve(records)
            validations.append(v)
            seconds.append(s)
            clipped.append(c)
        results[epochs] = (validations, seconds, clipped)

    one, many = results[1], results[args.epochs]
    one_validation, many_validation = mean_curves(one[0]), mean_curves(many[0])
    one_seconds, many_seconds = mean_curves(one[1]), mean_curves(many[1])
    many_clipped = mean_curves(many[2])
    print(f"settings: 16 prompts x 8 answers x 32 tokens, loss {args.loss_type}, learning rate "
          f"{args.learning_rate:g}, {args.rounds} rounds, "
          f"mean of {args.seeds} seeds, {torch.get_num_threads()} threads; validation on 64 prompts")
    print(f"{'round':>5}  {'validation E1':>13}  {f'validation E{args.epochs}':>13}  {'s E1':>6}  "
          f"{f's E{args.epochs}':>6}  {f'clipped E{args.epochs}':>11}")
    for number, (v1, vn) in enumerate(zip(one_validation, many_validation, strict=True)):
        if number == 0:
            print(f"{0:>5}  {v1:>13.3f}  {vn:>13.3f}  {'':>6}  {'':>6}  {'':>11}")
            continue
        print(f"{number:>5}  {v1:>13.3f}  {vn:>13.3f}  {one_seconds[number - 1]:>6.2f}  "
              f"{many_seconds[number - 1]:>6.2f}  {many_clipped[number - 1]:>10.1%}")
    answers = args.rounds * 16 * 8
    gain_one, gain_many = one_validation[-1] - one_validation[0], many_validation[-1] - many_validation[0]
    best_one, best_many = max(one_validation) - one_validation[0], max(many_validation) - many_validation[0]
    median_one, median_many = statistics.median(one_seconds), statistics.median(many_seconds)
    print(f"Epochs 1: validation {one_validation[0]:.3f} -> {one_validation[-1]:.3f} (best +{best_one:.3f}), "
          f"median {median_one:.2f} s per round")
    print(f"Epochs {args.epochs}: validation {many_validation[0]:.3f} -> {many_validation[-1]:.3f} "
          f"(best +{best_many:.3f}), median {median_many:.2f} s per round")
    print(f"gain per 1,000 sampled answers: Epochs 1 {gain_one / answers * 1000:+.4f}, "
          f"Epochs {args.epochs} {gain_many / answers * 1000:+.4f}")
    print(f"gain per minute of rounds: Epochs 1 {gain_one / (sum(one_seconds) / 60):+.4f}, "
          f"Epochs {args.epochs} {gain_many / (sum(many_seconds) / 60):+.4f}")


if __name__ == "__main__":
    main()
