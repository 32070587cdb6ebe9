"""The jobs follow the event log: what the console recorded while no dispatcher ran is sent once one starts, and
only once however many start (two on PostgreSQL, taking turns on the position's row); a dispatcher goes on from
the position it recorded; on the embedded default a restart sends again what the in-memory queue had not finished,
and only that; a message that must go first holds back what follows it."""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from uuid import UUID

import pytest
from dramatiq import Message as DramatiqMessage
from dramatiq.brokers.stub import StubBroker

from domain.actors import Actor
from domain.application import Verity
from domain.runs.settings import run_body_from_api
from jobs.actors import declare_actors
from jobs.config import JobsConfig
from jobs.context import JobContext
from jobs.dispatch_log import DispatchLog
from jobs.dispatch_routes import NotSentNow
from jobs.dispatcher import Dispatcher
from jobs.ledger import Ledger
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16}
HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}
SCORING = {"preset": "verifiable", "format_bonus": True}
_message_ids = itertools.count(1)


@dataclass
class Message:
    message_id: str = field(default_factory=lambda: f"m{next(_message_ids)}")


@dataclass
class Outbox:
    """Records what the dispatcher sends, as (kind, id), and the message of each; `slow` widens the window two
    dispatchers could race in; `refuse` names the kinds whose sending fails now (the broker out of reach)."""

    sent: list[tuple[str, UUID]] = field(default_factory=list)
    messages: dict[UUID, Message] = field(default_factory=dict)
    slow: float = 0.0
    refuse: set[str] = field(default_factory=set)

    def _send(self, kind: str, target: UUID) -> Message:
        if kind in self.refuse:
            raise ConnectionError("the broker is out of reach")
        time.sleep(self.slow)
        self.sent.append((kind, target))
        self.messages[target] = Message()
        return self.messages[target]

    def send_launch(self, run_id: UUID) -> Message:
        return self._send("launch", run_id)

    def send_merge(self, run_id: UUID) -> Message:
        return self._send("merge", run_id)

    def send_evaluation(self, evaluation_id: UUID) -> Message:
        return self._send("evaluation", evaluation_id)

    def send_loop_step(self, loop_id: UUID) -> Message:
        return self._send("loop", loop_id)

    def send_experiment_step(self, experiment_id: UUID) -> Message:
        return self._send("experiment", experiment_id)


class SlowBroker(StubBroker):
    """A broker that takes its time, so two dispatchers are at work at once."""

    def enqueue(self, message, *, delay=None):
        time.sleep(0.1)
        return super().enqueue(message, delay=delay)


@dataclass
class Console:
    settings: Settings
    verity: Verity
    org_id: UUID
    project_id: UUID

    def launched(self) -> UUID:
        draft = run_body_from_api({"training": {"rl": {"reward": MATH_PAIRS, "rounds": 3}}})
        run_id = self.verity.save_run(self.org_id, self.project_id, draft, OWNER).id
        self.verity.launch_run(self.org_id, run_id, OWNER, "owner")
        return run_id

    def evaluation(self) -> UUID:
        return self.verity.create_evaluation(
            self.org_id, self.project_id, name="held out", source=HELD_OUT, scoring=SCORING,
            main_metric="math_pairs", actor=OWNER, max_answer_tokens=16,
        ).id

    def dispatcher(self, outbox: Outbox, in_memory: bool = False) -> Dispatcher:
        return Dispatcher(self.verity, outbox, DispatchLog(self.settings), in_memory=in_memory)

    @property
    def head(self) -> int:
        return self.verity.recorder.max_notification_id() or 0


def _console(settings: Settings) -> Console:
    build_read_models(settings)  # the schema, the dispatcher's row among it
    verity = build_application(settings)
    org_id, project_id = ensure_default_organization(settings, verity)
    return Console(settings, verity, org_id, project_id)


@pytest.fixture
def sqlite_console(sqlite_settings: Settings) -> Console:
    return _console(sqlite_settings)


@pytest.fixture
def postgres_console(postgres_settings: Settings) -> Console:
    return _console(postgres_settings)


def test_launches_recorded_while_no_dispatcher_ran_are_sent_once_by_two_dispatchers_on_postgres(
    postgres_console: Console,
) -> None:
    console = postgres_console
    runs = [console.launched() for _ in range(6)]  # the console recorded them; no jobs were running
    config = JobsConfig(reconcile_every_seconds=60.0)
    brokers = [SlowBroker(), SlowBroker()]  # two processes, each with the jobs' actors on its broker connection
    dispatchers = []
    for broker in brokers:
        ctx = JobContext(console.settings, build_application(console.settings), Ledger(console.settings), config)
        broker.declare_queue("local")
        dispatchers.append(Dispatcher(ctx.verity, declare_actors(broker, ctx), DispatchLog(console.settings)))

    passes = [threading.Thread(target=dispatcher.run_once) for dispatcher in dispatchers]
    for thread in passes:
        thread.start()
    for thread in passes:
        thread.join(timeout=60)
    for dispatcher in dispatchers:
        dispatcher.run_once()  # again: neither finds anything left to send

    queued = [broker.queues["local"].get_nowait() for broker in brokers for _ in range(broker.queues["local"].qsize())]
    launches = Counter(UUID(DramatiqMessage.decode(encoded).args[0]) for encoded in queued)
    assert launches == dict.fromkeys(runs, 1)  # one message per launch
    for run_id in runs:
        events = [type(event).__qualname__ for event in console.verity.repository.event_store.get(run_id)]
        assert events.count("Run.Queued") == 1
        assert console.verity.get_run(None, run_id).state == "queued"
    assert all(dispatcher.sent_to() == console.head for dispatcher in dispatchers)


def test_two_dispatchers_following_the_log_on_postgres_send_each_launch_once(postgres_console: Console) -> None:
    console = postgres_console
    outbox = Outbox(slow=0.02)
    dispatchers = [console.dispatcher(outbox), console.dispatcher(outbox)]
    for dispatcher in dispatchers:
        dispatcher.start()
    try:
        runs = [console.launched() for _ in range(10)]  # recorded while both follow the log
        for dispatcher in dispatchers:
            assert dispatcher.wait_sent(console.head, timeout=30)
    finally:
        for dispatcher in dispatchers:
            dispatcher.stop()
    assert sorted(outbox.sent) == sorted(("launch", run_id) for run_id in runs)


def test_a_dispatcher_goes_on_from_the_position_it_recorded(sqlite_console: Console) -> None:
    console = sqlite_console
    first = console.launched()
    outbox = Outbox()
    console.dispatcher(outbox).run_once()
    assert outbox.sent == [("launch", first)]

    second = console.launched()  # recorded while no dispatcher runs: the console was stopped
    restarted = Outbox()
    console.dispatcher(restarted).run_once()
    assert restarted.sent == [("launch", second)]


def test_two_dispatchers_on_one_sqlite_data_folder_take_turns(sqlite_console: Console) -> None:
    console = sqlite_console
    runs = [console.launched() for _ in range(4)]
    outbox = Outbox(slow=0.1)
    dispatchers = [console.dispatcher(outbox), console.dispatcher(outbox)]
    passes = [threading.Thread(target=dispatcher.run_once) for dispatcher in dispatchers]
    for thread in passes:
        thread.start()
    for thread in passes:
        thread.join(timeout=30)
    assert sorted(outbox.sent) == sorted(("launch", run_id) for run_id in runs)


def test_a_restart_of_the_embedded_default_sends_again_only_what_its_memory_had_not_finished(
    sqlite_console: Console,
) -> None:
    console = sqlite_console
    done_evaluation = console.evaluation()
    waiting_evaluation = console.evaluation()
    run_id = console.launched()
    outbox = Outbox()
    before = console.dispatcher(outbox, in_memory=True)
    before.run_once()
    assert outbox.sent == [("evaluation", done_evaluation), ("evaluation", waiting_evaluation), ("launch", run_id)]
    # the worker finished the first evaluation's message; the second still waited in memory when the process stopped
    before.finished(outbox.messages[done_evaluation].message_id)
    before.run_once()

    after = Outbox()
    console.dispatcher(after, in_memory=True).run_once()
    # the second evaluation again; not the first (finished), nor the launch (the reconciler puts a Queued run back)
    assert after.sent == [("evaluation", waiting_evaluation)]


def test_an_evaluation_that_cannot_be_sent_now_goes_first_once_it_can(sqlite_console: Console) -> None:
    console = sqlite_console
    evaluation_id = console.evaluation()
    run_id = console.launched()
    outbox = Outbox(refuse={"evaluation"})
    dispatcher = console.dispatcher(outbox)
    with pytest.raises(NotSentNow):
        dispatcher.run_once()
    assert outbox.sent == []  # the launch recorded after it waits too
    outbox.refuse.clear()
    dispatcher.run_once()
    assert outbox.sent == [("evaluation", evaluation_id), ("launch", run_id)]


def test_what_is_no_longer_to_do_is_not_sent(sqlite_console: Console) -> None:
    console = sqlite_console
    cancelled = console.launched()
    console.verity.cancel_run(console.org_id, cancelled, OWNER)
    launched = console.launched()
    outbox = Outbox()
    console.dispatcher(outbox).run_once()
    assert outbox.sent == [("launch", launched)]
