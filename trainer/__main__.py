"""The trainer's command line.

`python -m trainer run SPEC.json`, `python -m trainer evaluate SPEC.json`, `python -m trainer merge SPEC.json`,
`python -m trainer probe SPEC.json` (a reward probe: trainer/probe.py),
`python -m trainer rescore SPEC.json` (stored answers scored with another reward: trainer/rescore.py) and
`python -m trainer tiny-model build --out DIR --seed N`.

stdout carries progress records only (one JSON line each); logs go to stderr, in the worker's format
(verity/log_format.py: text, or one JSON object a line with the run it trains where VERITY_LOG_FORMAT=json).
"""

from __future__ import annotations

import argparse
import json
import logging
import os

from verity.log_format import configure_logging


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trainer")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="do the RL, SFT, DPO or Head run a spec describes")
    run_parser.add_argument("spec", help="path of the run spec (JSON)")
    evaluate_parser = commands.add_parser("evaluate", help="score a model on test examples (an evaluation spec)")
    evaluate_parser.add_argument("spec", help="path of the evaluation spec (JSON)")
    probe_parser = commands.add_parser("probe", help="sample and score a reward probe (a probe spec)")
    probe_parser.add_argument("spec", help="path of the probe spec (JSON)")
    rescore_parser = commands.add_parser("rescore", help="score stored answers again with another reward")
    rescore_parser.add_argument("spec", help="path of the re-scoring spec (JSON)")
    merge_parser = commands.add_parser("merge", help="merge a run's adapter into its base model (a merge spec)")
    merge_parser.add_argument("spec", help="path of the merge spec (JSON)")
    tiny = commands.add_parser("tiny-model", help="the project's own tiny model")
    tiny_commands = tiny.add_subparsers(dest="tiny_command", required=True)
    build = tiny_commands.add_parser("build", help="build and warm-start the tiny model, with no download")
    build.add_argument("--out", required=True)
    build.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    configure_logging()
    try:
        return _run_command(args)
    except Exception:
        # one record, the traceback in it, rather than a line of JSON logs per line of the traceback
        logging.getLogger("trainer").exception("the trainer stopped on an error")
        return 1


def _run_command(args: argparse.Namespace) -> int:
    if args.command == "tiny-model":
        from trainer.tiny_model import build_tiny_model

        facts = build_tiny_model(args.out, seed=args.seed)
        logging.getLogger("trainer").info("tiny model built in %s: %s", args.out, json.dumps(facts))
        return 0

    if args.command == "evaluate":
        from trainer.evaluate import evaluate_from_file

        return evaluate_from_file(args.spec)

    if args.command == "probe":
        from trainer.probe import probe_from_file

        return probe_from_file(args.spec)

    if args.command == "rescore":
        from trainer.rescore import rescore_from_file

        return rescore_from_file(args.spec)

    if args.command == "merge":
        from trainer.merge import merge_from_file

        return merge_from_file(args.spec)

    with open(args.spec) as handle:  # the spec's objective picks the loop: RL (the default), SFT, DPO or Head
        objective = json.load(handle).get("objective", "rl")
    if objective in ("sft", "dpo", "head"):
        from trainer.tuning import run_from_file as run_tuning_from_file

        return run_tuning_from_file(args.spec)
    from trainer.loop import run_from_file

    return run_from_file(args.spec)


if __name__ == "__main__":
    # What it writes (adapters, rollouts, models) is its owner's alone, like the rest of the data folder
    # (verity/data_folder.py); the worker that starts it has this umask already, a person starting it by hand not.
    os.umask(0o077)
    raise SystemExit(main())
