"""The Dramatiq broker, built from the settings in one place at worker boot or app start.

No broker URL: the embedded default, an in-process StubBroker that needs no server (its queues live in memory,
so the app puts Queued runs back on them at start-up). `redis://…` or `amqp://…`: production, where `verity worker`
processes on other machines consume the providers' queues.
"""

from __future__ import annotations

import re

import dramatiq
from dramatiq.brokers.stub import StubBroker

from verity.config import ConfigurationError, Settings

QUEUE_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9._-]*$")


def build_broker(settings: Settings) -> dramatiq.Broker:
    url = settings.broker_url
    if not url:
        return StubBroker()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from dramatiq.brokers.redis import RedisBroker

        return RedisBroker(url=url)
    if url.startswith(("amqp://", "amqps://")):
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        return RabbitmqBroker(url=url)
    raise ConfigurationError(f"VERITY_BROKER_URL must start with redis:// or amqp://, not {url.split(':')[0]}://")


def provider_queue(provider: str | None) -> str:
    """A Training provider is a named queue; `local` always exists."""
    name = (provider or "local").strip() or "local"
    if not QUEUE_NAME.match(name):
        raise ConfigurationError(f"The training provider {name!r} can't name a queue: use letters, digits, . _ -")
    return name


def is_embedded(broker: dramatiq.Broker) -> bool:
    return isinstance(broker, StubBroker)
