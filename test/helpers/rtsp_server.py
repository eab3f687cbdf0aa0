#!/usr/bin/python3
# A real RTSP server for the live-video tests (GStreamer's gst-rtsp-server through PyGObject): serves one
# pre-encoded H.264 MP4 (no B-frames) at rtsp://127.0.0.1:<port>/live, looping forever in real time, so no
# encoder plugin is needed. Spawned by test/helpers/rtsp-server.ts.
#
#   rtsp_server.py CLIP [PORT]     PORT 0 (default) takes a free port
#
# stdout: "READY <port>" once the server listens. stdin, one command a line: "stall" stops sending frames
# (the connection stays open), "resume" sends again. The server exits when stdin closes, so it never
# outlives the test that spawned it.
import sys
import threading
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstApp, GstRtspServer  # noqa: E402,F401


def load_access_units(path):
    """Every H.264 access unit of the clip as Annex B bytes (SPS/PPS repeated before each key frame)."""
    pipe = Gst.parse_launch(
        f'filesrc location="{path}" ! qtdemux ! h264parse config-interval=-1 ! '
        "video/x-h264,stream-format=byte-stream,alignment=au ! appsink name=out sync=false"
    )
    sink = pipe.get_by_name("out")
    pipe.set_state(Gst.State.PLAYING)
    units = []
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        buf = sample.get_buffer()
        ok, info = buf.map(Gst.MapFlags.READ)
        if ok:
            units.append((bytes(info.data), buf.duration))
            buf.unmap(info)
    pipe.set_state(Gst.State.NULL)
    if not units:
        sys.exit(f"no H.264 access units in {path}")
    return units


class LoopingFactory(GstRtspServer.RTSPMediaFactory):
    """One shared live pipeline; a thread pushes the clip's access units at their own pace, forever."""

    def __init__(self, units):
        super().__init__()
        self.units = units
        self.stalled = threading.Event()
        self.set_shared(True)
        self.set_launch(
            "( appsrc name=src is-live=true format=time do-timestamp=true "
            "caps=video/x-h264,stream-format=byte-stream,alignment=au ! rtph264pay name=pay0 pt=96 config-interval=1 )"
        )
        self.connect("media-configure", self.on_configure)

    def on_configure(self, _factory, media):
        src = media.get_element().get_child_by_name("src")
        stop = threading.Event()
        media.connect("unprepared", lambda *_: stop.set())
        threading.Thread(target=self.feed, args=(src, stop), daemon=True).start()

    def feed(self, src, stop):
        frame_ns = self.units[0][1] if self.units[0][1] != Gst.CLOCK_TIME_NONE else 40_000_000
        start = time.monotonic()
        n = 0
        while not stop.is_set():
            # A stalled source keeps its connection and sends nothing, like a camera that froze.
            if self.stalled.is_set():
                time.sleep(0.05)
                start = time.monotonic() - n * frame_ns / 1e9
                continue
            data, _ = self.units[n % len(self.units)]
            buf = Gst.Buffer.new_wrapped(data)
            buf.duration = frame_ns
            if src.emit("push-buffer", buf) != Gst.FlowReturn.OK:
                break
            n += 1
            delay = start + n * frame_ns / 1e9 - time.monotonic()
            if delay > 0:
                time.sleep(delay)


def main():
    Gst.init(None)
    clip = sys.argv[1]
    port = sys.argv[2] if len(sys.argv) > 2 else "0"
    factory = LoopingFactory(load_access_units(clip))
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    server.get_mount_points().add_factory("/live", factory)
    if server.attach(None) == 0:
        sys.exit(f"could not listen on port {port}")
    loop = GLib.MainLoop()

    def commands():
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "stall":
                factory.stalled.set()
            elif cmd == "resume":
                factory.stalled.clear()
        GLib.idle_add(loop.quit)

    threading.Thread(target=commands, daemon=True).start()
    print(f"READY {server.get_bound_port()}", flush=True)
    loop.run()


if __name__ == "__main__":
    main()
