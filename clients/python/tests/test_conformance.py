"""The Python SDK against a real server through the conformance proxy: every case of
clients/conformance/cases.json, named by its id, with Client and (where the paths differ) AsyncClient."""
from __future__ import annotations

import asyncio
import base64
import io
import json
import time
from pathlib import Path

import httpx
import pytest

from sightflow import (
    OPERATIONS, AsyncClient, BadRequestError, Client, ConflictError, OverloadedError, WebhookVerificationError,
)

from conftest import Conformance, wait_for


def video(q: str = "frames=3&frame_ms=1") -> str:
    return f"http://127.0.0.1:9/clip.mp4?{q}"


def client(c: Conformance, key: str | None = None) -> Client:
    return Client(key or c.key, base_url=c.url, admin_token=c.admin_token)


def own_project(c: Conformance, name: str) -> str:
    """A key of a new project, so that counting its tasks counts only this case's."""
    with client(c) as admin:
        project = admin.call("admin.projects.create", body={"name": name})
        return admin.call("admin.projects.keys.create", path={"id": project["id"]}, body={"name": "k"})["key"]


def test_retry_after_503(c: Conformance) -> None:
    c.arm({"kind": "status", "method": "GET", "path": "/v1/project", "status": 503, "headers": {"retry-after": "1"}})
    with client(c) as sf:
        started = time.monotonic()
        project = sf.project()
        elapsed = time.monotonic() - started
    assert project["id"]
    assert elapsed >= 1.0, f"retried after {elapsed:.3f} s, before Retry-After"
    assert c.count("GET", "/v1/project") == 2
    assert c.count("GET", "/v1/project", forwarded=True) == 1


def test_retry_after_503_async(c: Conformance) -> None:
    c.arm({"kind": "status", "method": "GET", "path": "/v1/project", "status": 503, "headers": {"retry-after": "1"}})

    async def run() -> tuple[dict, float]:
        async with AsyncClient(c.key, base_url=c.url) as sf:
            started = time.monotonic()
            project = await sf.project()
            return project, time.monotonic() - started

    project, elapsed = asyncio.run(run())
    assert project["id"] and elapsed >= 1.0
    assert c.count("GET", "/v1/project") == 2


def test_no_retry_400(c: Conformance) -> None:
    with client(c) as sf, pytest.raises(BadRequestError) as err:
        sf.vision.detect(c.image_url, confidence_threshold=7)
    e = err.value
    assert e.status == 400 and e.type == "invalid_request_error" and e.param == "confidence_threshold"
    assert e.code and e.request_id
    assert c.count("POST", "/v1/vision/detect") == 1


def test_no_retry_409(c: Conformance) -> None:
    with client(c) as sf:
        task = sf.tasks.create(input=[{"type": "video_url", "url": video()}], steps=[{"model": "detect"}])
        sf.tasks.wait(task["id"], poll_interval=0.05, timeout=30)
        c.reset()
        with pytest.raises(ConflictError) as err:
            sf.tasks.cancel(task["id"])
    assert err.value.type == "conflict_error"
    assert c.count("POST", f"/v1/video/tasks/{task['id']}/cancel") == 1


def test_retries_bounded(c: Conformance) -> None:
    c.arm({"kind": "status", "method": "GET", "path": "/v1/models", "status": 503, "headers": {"retry-after": "0"}, "times": 3})
    with client(c) as sf, pytest.raises(OverloadedError) as err:
        list(sf.models.list())
    assert err.value.request_id == "req_conformance"
    assert c.count("GET", "/v1/models") == 3


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_idempotent_create_after_cut(c: Conformance, mode: str) -> None:
    key = own_project(c, f"idempotency-{mode}")
    c.reset()
    c.arm({"kind": "cut_after_upstream", "method": "POST", "path": "/v1/video/process"})
    body = {"input": [{"type": "video_url", "url": video()}], "steps": [{"model": "detect"}]}
    if mode == "sync":
        with client(c, key) as sf:
            created = sf.tasks.create(body)
            ids = [t["id"] for t in sf.tasks.list()]
    else:
        async def run() -> tuple[dict, list[str]]:
            async with AsyncClient(key, base_url=c.url) as sf:
                created = await sf.tasks.create(body)
                return created, [t["id"] async for t in sf.tasks.list()]
        created, ids = asyncio.run(run())
    posts = [s for s in c.seen() if s["method"] == "POST" and s["path"] == "/v1/video/process"]
    assert len(posts) == 2
    assert posts[0]["status"] == 202 and posts[0]["fault"] == "cut_after_upstream"
    assert ids == [created["id"]]


def _archive(c: Conformance, task_id: str) -> tuple[bytes, list[str], set[int]]:
    raw = httpx.get(f"{c.upstream}/v1/video/tasks/{task_id}/stream", headers={"authorization": f"Bearer {c.key}"}).content
    events = raw.split(b"\n\n")[:-1]
    boundaries, at = {0}, 0
    for e in events:
        at += len(e) + 2
        boundaries.add(at)
    ids = [json.loads(e[6:])["id"] for e in events if e.startswith(b"data: {")]
    assert events[-1] == b"data: [DONE]"
    return raw, ids, boundaries


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_stream_resume_cuts(c: Conformance, mode: str) -> None:
    with client(c) as sf:
        task = sf.tasks.create(input=[{"type": "video_url", "url": video("frames=30&frame_ms=1&targets=3")}], steps=[{"model": "detect"}])
        sf.tasks.wait(task["id"], poll_interval=0.05, timeout=30)
    raw, ids, boundaries = _archive(c, task["id"])
    assert len(ids) >= 30
    c.reset()
    c.arm({"kind": "cut_stream", "method": "GET", "path": f"/v1/video/tasks/{task['id']}/stream",
           "cuts": ["second", "first", "second", "second", "second"]})
    if mode == "sync":
        with client(c) as sf:
            stream = sf.tasks.stream(task["id"])
            got = [chunk["id"] for chunk in stream]
    else:
        async def run() -> tuple[list[str], object]:
            async with AsyncClient(c.key, base_url=c.url) as sf:
                stream = sf.tasks.stream(task["id"])
                return [chunk["id"] async for chunk in stream], stream
        got, stream = asyncio.run(run())
    assert got == ids
    cuts = c.cuts()
    assert len(cuts) == 5
    assert all(cut["cutAt"] not in boundaries for cut in cuts)
    assert cuts[1]["mode"] == "first"
    assert stream.resumes == 5
    assert stream.position == len(raw)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_list_45_by_20(c: Conformance, mode: str) -> None:
    key = own_project(c, f"list-{mode}")
    with client(c, key) as sf:
        created = {sf.tasks.create(input=[{"type": "video_url", "url": video("frames=1&frame_ms=0")}], steps=[{"model": "detect"}])["id"] for _ in range(45)}
        c.reset()
        if mode == "sync":
            seen = [t["id"] for t in sf.tasks.list(limit=20)]
            first = sf.tasks.list(limit=20).page()
    if mode == "async":
        async def run() -> tuple[list[str], dict]:
            async with AsyncClient(key, base_url=c.url) as a:
                return [t["id"] async for t in a.tasks.list(limit=20)], await a.tasks.list(limit=20)
        seen, first = asyncio.run(run())
    assert len(seen) == 45 and set(seen) == created
    assert c.count("GET", "/v1/video/tasks") == 4  # three pages, then the first page again
    assert len(first["data"]) == 20 and first["has_more"] is True


def test_every_operation(c: Conformance) -> None:
    doc = httpx.get(f"{c.upstream}/openapi.json").json()
    documented = sorted(op["operationId"] for ops in doc["paths"].values() for op in ops.values())
    assert sorted(OPERATIONS) == documented
    with client(c) as sf:
        for op_id in documented:
            spec = OPERATIONS[op_id]
            c.reset()
            try:
                out = sf.call(op_id, path={p: "conformance-x" for p in spec["path_params"]}, max_retries=0, timeout=10)
                if isinstance(out, httpx.Response):
                    out.close()
                status, code = 200, None
            except Exception as e:  # noqa: BLE001 - any answer is fine as long as the route exists
                status, code = getattr(e, "status", None), getattr(e, "code", None)
            path = spec["path"]
            for p in spec["path_params"]:
                path = path.replace("{" + p + "}", "conformance-x")
            assert c.count(spec["method"], path) == 1, f"{op_id}: {spec['method']} {path} reached the server once"
            assert status != 405 and code != "route_not_found", f"{op_id}: no such route"


def test_webhook_verify(c: Conformance) -> None:
    with client(c) as sf:
        task = sf.tasks.create(input=[{"type": "video_url", "url": video()}], steps=[{"model": "detect"}],
                               webhook={"url": f"{c.webhook_url}/hook"})
        secret = task["webhook"]["secret"]
        d = wait_for("the delivery", lambda: next((x for x in c.webhooks() if task["id"] in x["body"]), None))
        event = sf.webhooks.verify(d["headers"], d["body"], secret)
        assert event["data"]["id"] == task["id"] and event["type"] == "video.task.succeeded"
        with pytest.raises(WebhookVerificationError):
            sf.webhooks.verify(d["headers"], d["body"].replace("succeeded", "failed"), secret)
        with pytest.raises(WebhookVerificationError):
            sf.webhooks.verify({**d["headers"], "webhook-signature": "v1," + base64.b64encode(bytes(32)).decode()}, d["body"], secret)
        ts = int(d["headers"]["webhook-timestamp"])
        with pytest.raises(WebhookVerificationError):
            sf.webhooks.verify(d["headers"], d["body"], secret, now=ts + 301)
        sf.webhooks.verify(d["headers"], d["body"].encode(), secret, now=ts + 299)


def test_wait_terminal(c: Conformance) -> None:
    with client(c) as sf:
        task = sf.tasks.process(video("frames=5&frame_ms=5"), steps=[{"model": "detect"}])
        seen: list[str] = []
        done = sf.tasks.wait(task["id"], poll_interval=0.02, timeout=30, on_progress=lambda t: seen.append(t["status"]))
        assert done["status"] == "succeeded" and seen[-1] == "succeeded"
        assert sf.tasks.results(task["id"])["id"] == task["id"]

    async def run() -> dict:
        async with AsyncClient(c.key, base_url=c.url) as a:
            t = await a.tasks.process(video("frames=5&frame_ms=5"), steps=[{"model": "detect"}])
            return await a.tasks.wait(t["id"], poll_interval=0.02, timeout=30)

    assert asyncio.run(run())["status"] == "succeeded"


def test_upload_bytes(c: Conformance) -> None:
    data = Path(c.image_path).read_bytes()
    with client(c) as sf:
        by_url = sf.vision.detect(c.image_url)
        assert by_url["objects"]
        for image in (c.image_path, Path(c.image_path), data, io.BytesIO(data)):
            assert sf.vision.detect(image)["objects"] == by_url["objects"]
        strict = sf.vision.detect(data, confidence_threshold=0.99, classes=["person"])
        assert all(o["class"] == "person" and o["confidence"] >= 0.99 for o in strict["objects"])
        # An item's image from a file, and a search by an image from bytes: the photo finds itself first.
        col = sf.collections.create("upload-case-py")
        indexed = sf.collections.index(col["id"], [{"image": Path(c.image_path), "metadata": {"from": "path"}}, {"text": "a bowl of soup"}])
        found = sf.collections.search(col["id"], image=data, top_k=1)
        assert found["results"][0]["id"] == indexed["ids"][0]


def test_upload_bytes_numpy_and_pil(c: Conformance) -> None:
    np = pytest.importorskip("numpy")
    Image = pytest.importorskip("PIL.Image")
    img = Image.open(c.image_path).convert("RGB")
    arr = np.asarray(img)
    with client(c) as sf:
        by_pil = sf.vision.detect(img)
        by_array = sf.vision.detect(arr)
    # Both are the same pixels sent losslessly (PNG), so the answers are equal; the JPEG's own bytes differ
    # from them only by its decoder, so the classes found are the same.
    assert by_pil["objects"] == by_array["objects"]
    assert {o["class"] for o in by_pil["objects"]} >= {"person"}


def test_paginate_any_list(c: Conformance) -> None:
    with client(c) as sf:
        col = sf.collections.create("paginate-case-py")
        sf.collections.index(col["id"], [{"text": t} for t in ("one", "two", "three", "four", "five")])
        c.reset()
        ids = [item["id"] for item in sf.paginate("vectors.collections.items.list", path={"id": col["id"]}, query={"limit": 2})]
        assert len(ids) == 5 and len(set(ids)) == 5
        assert c.count("GET", f"/v1/vectors/collections/{col['id']}/items") == 3
        assert len(list(sf.paginate("admin.projects.list"))) >= 1
        # The offset pages of items() say the same.
        assert sorted(item["id"] for item in sf.collections.items(col["id"], limit=2)) == sorted(ids)

    async def run() -> tuple[list[str], list[str]]:
        async with AsyncClient(c.key, base_url=c.url, admin_token=c.admin_token) as a:
            by_op = [i["id"] async for i in a.paginate("vectors.collections.items.list", path={"id": col["id"]}, query={"limit": 2})]
            return by_op, [p["id"] async for p in a.paginate("admin.projects.list")]

    by_op, projects = asyncio.run(run())
    assert by_op == ids and len(projects) >= 1


def test_stream_live(c: Conformance) -> None:
    with client(c) as sf:
        task = sf.tasks.create(input=[{"type": "video_url", "url": video("frames=20&frame_ms=60")}], steps=[{"model": "detect"}])
        c.arm({"kind": "cut_stream", "method": "GET", "path": f"/v1/video/tasks/{task['id']}/stream", "cuts": ["second", "second"]})
        chunks = list(sf.tasks.stream(task["id"]))
        assert sf.tasks.get(task["id"])["status"] == "succeeded"
    assert [ch["id"] for ch in chunks] == [f"{task['id']}.{i}" for i in range(21)]
    assert chunks[-1]["finish_reason"] == "stop"
    assert len(c.cuts()) == 2


def test_moment_replay(c: Conformance) -> None:
    with client(c) as sf:
        task = sf.tasks.create(input=[{"type": "video_url", "url": video("frames=12&frame_ms=1&walkers=1")}], steps=[{"model": "detect"}])
        sf.tasks.wait(task["id"], poll_interval=0.05, timeout=30)
        raw = httpx.get(f"{c.upstream}/v1/video/tasks/{task['id']}/stream", headers={"authorization": f"Bearer {c.key}"}).content
        offset, starts, times = 0, [], []
        for e in raw.split(b"\n\n")[:-1]:
            if e.startswith(b"data: {"):
                starts.append(offset)
                times.append(json.loads(e[6:])["stream_info"].get("stream_time_ms"))
            offset += len(e) + 2
        hit = {"moment": {"task_id": task["id"], "stream_offset": starts[4], "end_ms": times[8]}}
        assert [ch["id"] for ch in sf.moments.replay(hit)] == [f"{task['id']}.{i}" for i in range(4, 9)]

    async def run() -> list[str]:
        async with AsyncClient(c.key, base_url=c.url) as a:
            return [ch["id"] async for ch in a.moments.replay(hit)]

    assert asyncio.run(run()) == [f"{task['id']}.{i}" for i in range(4, 9)]


def test_stream_stall(c: Conformance) -> None:
    with client(c) as sf:
        task = sf.tasks.create(input=[{"type": "video_url", "url": video("frames=6&frame_ms=1")}], steps=[{"model": "detect"}])
        sf.tasks.wait(task["id"], poll_interval=0.05, timeout=30)
    c.arm({"kind": "cut_stream", "method": "GET", "path": f"/v1/video/tasks/{task['id']}/stream", "cuts": ["stall"]})
    with Client(c.key, base_url=c.url, timeout=1.0) as impatient:
        started = time.monotonic()
        stream = impatient.tasks.stream(task["id"])
        got = [ch["id"] for ch in stream]
    assert got == [f"{task['id']}.{i}" for i in range(7)]
    assert stream.resumes == 1
    assert time.monotonic() - started >= 1.0
