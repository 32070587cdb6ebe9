"""Seconds per round of this trainer against TRL's GRPOTrainer, on the same tiny model, prompts, reward and settings.

    .venv/bin/python bench/trainer_vs_trl.py [--rounds 8] [--blocks 2] [--turns] [--loss-type dapo] [--epochs 1]
                                             [--model DIR]
    .venv/bin/python bench/trainer_vs_trl.py --demo [--micro-batch-size 128]   # ours alone, the Demo's settings

Both sides: the tiny model (built here if missing), Math Pairs prompts, the math_pairs reward without format bonus,
16 prompts × 8 answers × up to 32 tokens, temperature 1, LoRA rank 16 / alpha 32 on every linear layer, no dropout,
fp32, no activation checkpointing, constant learning rate 5e-4, no KL term, gradient norm clipped to 1.0, 128 answers
per forward/backward at most, and --epochs passes over each round's answers (TRL's num_iterations: its round is
that many optimizer steps on one generation, timed together), clip range 0.2. The first round of each block is left
out of the median (warm-up).

Where they differ in what they compute:
- ours skips prompts whose answers all scored alike before any forward pass (TRL trains on them with advantage 0;
  the gradient is the same, the work is not);
- ours scores a cut-off answer 0 without grading it (TRL grades it like any other; at 32 tokens almost none are);
- with Epochs above 1, ours keeps the sampling policy's log-probabilities from its first pass; TRL computes them
  with one more forward pass over the answers after generating;
- ours also scores a validation sample (16 prompts here) greedily after every round and keeps the best round's
  adapter; TRL has no such step. Ours decodes a round's validation with the next round's answers (the same
  adapter), and splits that decode's seconds between the two by answers. The headline ratio counts ours'
  validation in; the line after it compares sampling + grading + update alone (what a TRL step does).

--demo times ours alone at the Demo project's run settings (verity/wiring.py: 16 prompts x 8 answers x 16 tokens,
its learning rate and micro batch size) on the Math Pairs prompts a Demo run gets (256 training, 128 validation),
and prints seconds per round by phase, the rewards and validation rewards; --micro-batch-size overrides the Demo's
micro batch to compare (the results must not change: the loss is a weighted sum over micro batches).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

PROMPTS_PER_ROUND = 16
ANSWERS_PER_PROMPT = 8
MAX_ANSWER_TOKENS = 32
LEARNING_RATE = 5e-4
LORA_RANK, LORA_ALPHA = 16, 32
REWARD = {"preset": "verifiable", "metric": "math_pairs", "format_bonus": False}


def ensure_tiny_model(folder: Path | None) -> Path:
    from trainer.tiny_model import TINY_MODEL_VERSION, build_tiny_model

    folder = folder or REPO_ROOT / ".tiny-model" / f"v{TINY_MODEL_VERSION}-seed0"
    if not (folder / "tiny_model.json").exists():
        print(f"building the tiny model in {folder} ...", file=sys.stderr)
        build_tiny_model(folder, seed=0)
    return folder


def ours_records(model_dir: Path, rows: list[dict], validation: list[dict], rounds: int, loss_type: str,
                 epochs: int = 1, seed: int = 0, learning_rate: float = LEARNING_RATE,
                 after_round: Callable[[Any], None] | None = None, **settings) -> list:
    """Our trainer's round records (round 0, the starting adapter's validation, first) for a full run; `settings`
    override the run settings below (RunSettings' names); `after_round` is called with each round's record as the
    run gives it (the next round waits for it to return)."""
    from domain.runs.run_settings import RunSettings
    from jobs.specs import training_spec
    from trainer.loop import run
    from trainer.spec import RunSpec

    chosen = RunSettings(**{
        "rounds": rounds, "prompts_per_round": PROMPTS_PER_ROUND, "answers_per_prompt": ANSWERS_PER_PROMPT,
        "max_answer_tokens": MAX_ANSWER_TOKENS, "learning_rate": learning_rate,
        "micro_batch_size": PROMPTS_PER_ROUND * ANSWERS_PER_PROMPT, "lora_rank": LORA_RANK, "lora_alpha": LORA_ALPHA,
        "loss_type": loss_type, "generation_backend": "transformers", "seed": seed, "rl_epochs": epochs, **settings,
    })
    records = []
    with tempfile.TemporaryDirectory() as storage:
        spec = RunSpec.from_dict(
            {
                "run_id": "bench",
                "model": {"path_or_id": str(model_dir)},
                "reward": {"config": REWARD},
                "train_rows": rows,
                "validation_rows": validation,
                "storage": {"location": storage},
                "deadline": time.time() + 86_400,
                **training_spec(chosen),  # a full run: its settings as the jobs write them
            }
        )
        assert run(spec, emit=lambda record: _kept(records, record, after_round)), records[-1]
    return [r for r in records if r.type == "round_scored"]


def _kept(records: list, record, after_round: Callable[[Any], None] | None) -> None:
    records.append(record)
    if after_round is not None and record.type == "round_scored":
        after_round(record)


def ours(model_dir: Path, rows: list[dict], validation: list[dict], rounds: int, loss_type: str, epochs: int,
         after_round: Callable[[Any], None] | None = None):
    records = ours_records(model_dir, rows, validation, rounds, loss_type, epochs, after_round=after_round)
    scored = [r for r in records if r.round > 0]
    steps = [r.seconds.sampling + r.seconds.grading + r.seconds.update for r in scored]
    with_validation = [r.seconds.total for r in scored]
    return steps, with_validation, [r.reward for r in scored]


def trl(model_dir: Path, rows: list[dict], rounds: int, loss_type: str, epochs: int,
        after_round: Callable[[], None] | None = None):
    """TRL's seconds per round and rewards; `after_round` is called after each round's `epochs` steps, outside
    their timing (the next step waits for it to return)."""
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from domain.rewards.config import RewardConfig
    from domain.rewards.registry import build_grader

    grader = build_grader(RewardConfig.from_dict(REWARD))

    def reward(completions, reference, **_):
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        return [score.value for score in grader.score_batch(texts, reference)]

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.seconds: list[float] = []
            self.rewards: list[float] = []

        def on_step_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.seconds.append(time.perf_counter() - self.started)
            if after_round is not None and len(self.seconds) % epochs == 0:
                after_round()

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "reward" in logs:
                self.rewards.append(logs["reward"])

    timer = StepTimer()
    answers = PROMPTS_PER_ROUND * ANSWERS_PER_PROMPT
    with tempfile.TemporaryDirectory() as output:
        config = GRPOConfig(
            output_dir=output,
            per_device_train_batch_size=answers,  # counts answers: 16 prompts × 8
            gradient_accumulation_steps=1,
            num_generations=ANSWERS_PER_PROMPT,
            max_completion_length=MAX_ANSWER_TOKENS,
            temperature=1.0,
            top_k=0,
            top_p=1.0,
            learning_rate=LEARNING_RATE,
            lr_scheduler_type="constant",
            warmup_steps=0,
            weight_decay=0.0,
            beta=0.0,
            loss_type=loss_type,
            num_iterations=epochs,  # one generation, then `epochs` optimizer steps on it
            epsilon=0.2,
            max_grad_norm=1.0,
            max_steps=rounds * epochs,
            bf16=False,
            fp16=False,
            gradient_checkpointing=False,
            use_cpu=True,
            logging_steps=1,
            disable_tqdm=True,
            report_to="none",
            save_strategy="no",
            seed=0,
        )
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=reward,
            args=config,
            train_dataset=Dataset.from_list(rows),
            processing_class=tokenizer,
            peft_config=LoraConfig(
                r=LORA_RANK, lora_alpha=LORA_ALPHA, lora_dropout=0.0, target_modules="all-linear",
                task_type="CAUSAL_LM",
            ),
            callbacks=[timer],
        )
        trainer.remove_callback(__import__("transformers").PrinterCallback)
        trainer.train()
    # a round is the `epochs` steps that share one generation (the first of them generates)
    seconds = [sum(timer.seconds[i:i + epochs]) for i in range(0, len(timer.seconds), epochs)]
    return seconds, timer.rewards[::epochs]


def demo(model_dir: Path, rounds: int, blocks: int, micro_batch_size: int | None) -> None:
    """Ours alone at the Demo project's run settings: seconds per round by phase, and what the run measured."""
    from domain.rewards.verifiable import math_pairs_rows
    from domain.runs.run_settings import VALIDATION_SAMPLE
    from verity.wiring import DEMO_RUN_DEFAULTS

    demo_settings = {**DEMO_RUN_DEFAULTS["rl"], **DEMO_RUN_DEFAULTS["advanced"], "rounds": rounds}
    if micro_batch_size is not None:
        demo_settings["micro_batch_size"] = micro_batch_size
    train, validation = math_pairs_rows(0, 256, validation_count=VALIDATION_SAMPLE)  # a Demo run's, seed 0
    phases = ("sampling", "grading", "update", "validation", "total")
    seconds: dict[str, list[float]] = {phase: [] for phase in phases}
    for _ in range(blocks):
        records = ours_records(model_dir, [dict(r) for r in train], [dict(r) for r in validation], loss_type="dapo",
                               **demo_settings)
        for record in records[2:]:  # round 0 and the first round warm up
            for phase in phases:
                seconds[phase].append(getattr(record.seconds, phase))
    print(f"Demo settings: {demo_settings}, {len(validation)} validation prompts, {blocks} blocks, "
          f"{torch.get_num_threads()} threads")
    print("median seconds per round: " + ", ".join(f"{p} {statistics.median(seconds[p]):.3f}" for p in phases))
    print("rewards: " + " ".join(f"{r.reward:.3f}" for r in records[1:]))
    print("validation rewards: " + " ".join(f"{r.validation_reward:.3f}" for r in records))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="rounds per block")
    parser.add_argument("--blocks", type=int, default=2, help="alternating blocks of each (the load of a shared "
                        "machine moves: alternating spreads it over both)")
    parser.add_argument("--loss-type", default="dapo", choices=["grpo", "dapo", "dr_grpo"])
    parser.add_argument("--epochs", type=int, default=1, choices=[1, 2, 3, 4], help="passes over each round's answers")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--demo", action="store_true", help="ours alone at the Demo project's run settings")
    parser.add_argument("--micro-batch-size", type=int, default=None, help="with --demo: instead of the Demo's")
    parser.add_argument("--turns", action="store_true", help="each block's rounds taken in turn one for one "
                        "(bench/taking_turns.py), not the block of one side then the other's")
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    if args.demo:
        demo(ensure_tiny_model(args.model), args.rounds, args.blocks, args.micro_batch_size)
        return

    from taking_turns import TakingTurns

    from trainer.tiny_model import math_pairs_rows

    model_dir = ensure_tiny_model(args.model)
    rows = math_pairs_rows(seed=21, count=1024)
    validation = math_pairs_rows(seed=22, count=16)

    ours_steps, ours_with_validation, ours_rewards, trl_steps, trl_rewards = [], [], [], [], []
    for _ in range(args.blocks):
        if args.turns:
            turns = TakingTurns(last_round=args.rounds)
            turns.start(functools.partial(ours, model_dir, rows, validation, args.rounds, args.loss_type,
                                          args.epochs))
            their_steps, trl_rewards = trl(model_dir, rows, args.rounds, args.loss_type, args.epochs,
                                           after_round=turns.other_round)
            steps, with_validation, ours_rewards = turns.finish()
        else:
            steps, with_validation, ours_rewards = ours(model_dir, rows, validation, args.rounds, args.loss_type,
                                                        args.epochs)
            their_steps, trl_rewards = trl(model_dir, rows, args.rounds, args.loss_type, args.epochs)
        ours_steps += steps[1:]  # the first round of each block warms up
        ours_with_validation += with_validation[1:]
        trl_steps += their_steps[1:]

    ours_median = statistics.median(ours_steps)
    ours_with_validation_median = statistics.median(ours_with_validation)
    trl_median = statistics.median(trl_steps)
    settings = f"{PROMPTS_PER_ROUND} prompts x {ANSWERS_PER_PROMPT} answers x {MAX_ANSWER_TOKENS} tokens"
    print(f"settings: {settings}, loss {args.loss_type}, epochs {args.epochs}, fp32, "
          f"{args.blocks} blocks of {args.rounds} rounds each{', taken in turn round by round' if args.turns else ''}, "
          f"{torch.get_num_threads()} threads")
    print(f"ours: median {ours_median:.3f} s per round (sampling + grading + update); "
          f"with validation {ours_with_validation_median:.3f} s; "
          f"reward {ours_rewards[0]:.3f} -> {ours_rewards[-1]:.3f}")
    print(f"TRL:  median {trl_median:.3f} s per round (GRPOTrainer step); "
          f"reward {trl_rewards[0]:.3f} -> {trl_rewards[-1]:.3f}" if trl_rewards else
          f"TRL:  median {trl_median:.3f} s per round (GRPOTrainer step)")
    print(f"ratio TRL/ours, ours with validation: {trl_median / ours_with_validation_median:.2f}")
    print(f"ratio TRL/ours, sampling + grading + update alone: {trl_median / ours_median:.2f}")


if __name__ == "__main__":
    main()
