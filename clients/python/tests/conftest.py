"""The conformance server (clients/conformance/server.ts: a real sightflow on loopback behind the fault
proxy), started once for the session; ``conformance`` is its address book and control API."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]


class Conformance:
    def __init__(self, info: dict[str, Any]) -> None:
        self.url: str = info["url"]
        self.upstream: str = info["upstream"]
        self.key: str = info["key"]
        self.admin_token: str = info["admin_token"]
        self.control: str = info["control"]
        self.webhook_url: str = info["webhook_url"]
        self.image_url: str = info["image_url"]
        self.image_path: str = info["image_path"]

    def arm(self, fault: dict[str, Any]) -> None:
        httpx.post(f"{self.control}/arm", json=fault).raise_for_status()

    def reset(self) -> None:
        httpx.post(f"{self.control}/reset").raise_for_status()

    def seen(self) -> list[dict[str, Any]]:
        return httpx.get(f"{self.control}/seen").json()

    def count(self, method: str, path: str, forwarded: bool | None = None) -> int:
        return sum(1 for s in self.seen() if s["method"] == method and s["path"] == path
                   and (forwarded is None or s["forwarded"] == forwarded))

    def cuts(self) -> list[dict[str, Any]]:
        return httpx.get(f"{self.control}/cuts").json()

    def webhooks(self) -> list[dict[str, Any]]:
        return httpx.get(f"{self.control}/webhooks").json()


def server_command() -> list[str]:
    """The server from the suite's compiled tree when the suite runs from one (SIGHTFLOW_TEST_TREE), else
    through tsx from the sources."""
    tree = os.environ.get("SIGHTFLOW_TEST_TREE")
    if tree and (Path(tree) / "clients/conformance/server.js").is_file():
        return ["node", "--enable-source-maps", str(Path(tree) / "clients/conformance/server.js")]
    return ["node", "--import", "tsx", "clients/conformance/server.ts"]


@pytest.fixture(scope="session")
def conformance() -> Iterator[Conformance]:
    proc = subprocess.Popen(server_command(), cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=30)
        raise RuntimeError(f"the conformance server did not start (exit {proc.returncode})")
    try:
        yield Conformance(json.loads(line))
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture()
def c(conformance: Conformance) -> Conformance:
    conformance.reset()
    return conformance


def wait_for(what: str, fn: Any, timeout: float = 30.0) -> Any:
    until = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > until:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
