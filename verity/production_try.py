"""`verity try-production`: the production layout on one machine, started by one command, for a try.

PostgreSQL and Redis are the machine's own (they must be running: their addresses are options); the command makes
the database if it is missing, starts an S3-compatible server on the loopback (moto's server mode, a stand-in for
the team's S3 or MinIO) with a bucket, runs the migrations, then `verity serve --workers N` and M `verity worker`
processes, each worker with its health port. Every process gets the same settings through its environment, as
processes on several machines would from their own. Ctrl-C (or SIGTERM) stops them all, the S3 server last.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

BUCKET = "verity-try"
S3_KEYS = {"AWS_ACCESS_KEY_ID": "try", "AWS_SECRET_ACCESS_KEY": "try", "AWS_DEFAULT_REGION": "us-east-1"}


class TryRefused(RuntimeError):
    """What the try needs is not there; the message says what, in words."""


@dataclass(frozen=True)
class Layout:
    database_url: str
    broker_url: str
    port: int
    web_processes: int
    workers: int
    s3_port: int
    first_health_port: int

    def environment(self) -> dict[str, str]:
        """What every process of the layout is given, beside the caller's own environment."""
        return {
            "VERITY_DATABASE_URL": self.database_url,
            "VERITY_BROKER_URL": self.broker_url,
            "VERITY_RATE_LIMIT_URL": self.broker_url,  # every web process counts in the same Redis
            "VERITY_STORAGE_URL": f"s3://{BUCKET}",
            "VERITY_S3_ENDPOINT_URL": self.s3_endpoint,
            **S3_KEYS,
        }

    @property
    def s3_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"


def ensure_database(database_url: str) -> None:
    """Makes the database when the server answers and it is missing; refuses in words when the server does not."""
    import psycopg

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as connection:
            if connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
                connection.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as error:
        raise TryRefused(f"PostgreSQL does not answer at {parts.hostname}:{parts.port or 5432} ({error}); "
                         "start it, or give --database-url.") from None


def check_broker(broker_url: str) -> None:
    import redis

    try:
        redis.Redis.from_url(broker_url, socket_connect_timeout=5).ping()
    except redis.RedisError as error:
        raise TryRefused(f"Redis does not answer at {broker_url} ({error}); start it, or give --broker-url.") from None


def start_s3(layout: Layout, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """moto's S3 server on the loopback, with the bucket the runs write to."""
    try:
        import boto3
        import moto.server  # noqa: F401  (only checks that it is installed)
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:
        raise TryRefused("The local S3 server is moto's: pip install 'moto[server]' (make install-test has it).") \
            from None
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(layout.s3_port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    client = boto3.client("s3", endpoint_url=layout.s3_endpoint, aws_access_key_id=S3_KEYS["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=S3_KEYS["AWS_SECRET_ACCESS_KEY"], region_name="us-east-1")
    deadline = time.monotonic() + 30
    while True:
        try:
            client.create_bucket(Bucket=BUCKET)
            return server
        except (BotoCoreError, ClientError):  # not listening yet
            if time.monotonic() > deadline or server.poll() is not None:
                _stop([server])
                raise TryRefused(f"The local S3 server did not start on port {layout.s3_port}.") from None
            time.sleep(0.3)


def commands(layout: Layout) -> list[list[str]]:
    """`verity serve --workers N` and each `verity worker`, with the interpreter running this command."""
    verity = [sys.executable, "-m", "verity.cli"]
    serve = [*verity, "serve", "--port", str(layout.port), "--workers", str(layout.web_processes)]
    workers = [[*verity, "worker", "--health-port", str(layout.first_health_port + n)] for n in range(layout.workers)]
    return [serve, *workers]


def try_production(layout: Layout, say: Callable[[str], None]) -> int:
    """Starts the layout and waits until a signal or a process ends; stops every process it started."""
    check_broker(layout.broker_url)
    ensure_database(layout.database_url)
    env = {**os.environ, **layout.environment()}
    s3 = start_s3(layout, env)
    started: list[subprocess.Popen[bytes]] = []
    try:
        subprocess.run([sys.executable, "-m", "verity.cli", "migrate"], env=env, check=True)
        serve, *workers = commands(layout)
        # the console first (it makes the secret key, the Default organization and the first owner), then the
        # workers, so no two processes make the same thing at once on a new data folder and database
        started = [subprocess.Popen(serve, env=env, start_new_session=True)]
        _wait_until_up(f"http://127.0.0.1:{layout.port}/healthz", started[0])
        started += [subprocess.Popen(command, env=env, start_new_session=True) for command in workers]
        say(f"The console: http://127.0.0.1:{layout.port} ({layout.web_processes} web processes; /readyz, /-/metrics)")
        for n in range(layout.workers):
            say(f"Worker {n + 1}: health on http://127.0.0.1:{layout.first_health_port + n}/readyz")
        say(f"S3: {layout.s3_endpoint}, bucket {BUCKET}; PostgreSQL: {layout.database_url}; Redis: "
            f"{layout.broker_url}. Ctrl-C stops them all.")
        return _wait(started)
    finally:
        _stop(started)
        _stop([s3])


def _wait_until_up(url: str, process: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:  # not listening yet (URLError is an OSError)
            time.sleep(0.5)
    raise TryRefused(f"The console did not answer at {url} within {seconds:.0f} s.")


def _wait(processes: list[subprocess.Popen[bytes]]) -> int:
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping:
        ended = next((p for p in processes if p.poll() is not None), None)
        if ended is not None:
            return ended.returncode or 1  # one process of the layout ended by itself: stop the others
        time.sleep(0.5)
    return 0


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each process's group (uvicorn's children, a worker's trainer), then SIGKILL after 20 s."""
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for process in processes:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

