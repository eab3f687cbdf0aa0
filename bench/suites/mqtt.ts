// `npm run bench -- mqtt [--quick] [--json]`: what publishing to MQTT costs live cameras. Four live RTSP
// cameras (the PETS09 walking scene looped in real time on loopback, test/helpers/rtsp_server.py) run as
// detect + analytics tasks (lines and zones across where people walk) through the real server, sampled at 2 fps,
// in rounds with `publish.mqtt` to a real mosquitto on loopback (a subscriber on every camera's events) and
// without, in pairs of one round of each whose first is drawn at random (6 pairs of 15 s; --quick 2 of 5 s),
// so that drift in the machine's other load falls on both modes. Reported per round: frames processed per
// camera per second, the lag from a frame's arrival at the decoder (stream_info.received_at_ms) to its chunk
// at an SSE subscriber and where it goes (before the chunk reaches the archive, the append, the delivery),
// and with MQTT the delay from the same arrival to each of its events at the MQTT subscriber. That subscriber
// is a process of its own (bench/mqtt-subscriber.ts): in this one its reads would run on the server's event
// loop and add to the lag it is compared with. Peer: the same server and cameras with MQTT off, in the same
// run; the ratios are on over off, and "within noise" is an exact sign-flip test over the pairs
// (bench/mqtt-verdict.ts). `--order off,on,nosub,...` runs rounds of one's choosing (nosub: MQTT on, no
// subscriber), `--seconds N` their length, and `--inject-ms N` makes publishing cost N ms of main thread a
// frame, to show that the verdict catches a real cost. Beside that end-to-end comparison (which other load on
// the machine moves a lot), the main thread's own cost: the time a task's publishing takes per frame and per
// event, over frames of synthetic crossings through the real analytics engine, with the publisher connected.
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { api, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { liveClip, startRtspServer } from '../../test/helpers/live-sources.js';
import { mosquittoMissing, startBroker } from '../../test/helpers/mosquitto.js';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import { sseReads } from '../sse-reads.js';
import { subscriberProcess } from '../mqtt-subscriber-process.js';
import { childPids, cpuMs } from '../proc-cpu.js';
import { createLogger } from '../../src/base/log.js';
import { AnalyticsEngine, type AnalyticsFrame } from '../../src/video/analytics/engine.js';
import { parseAnalytics } from '../../src/video/analytics/rules.js';
import { CameraPublisher } from '../../src/video/mqtt/camera-publisher.js';
import { MqttPublisher } from '../../src/video/mqtt/mqtt-publisher.js';
import { StreamArchive } from '../../src/video/stream/stream-archive.js';
import { pairedOrder, pairedVerdict } from '../mqtt-verdict.js';
import { crossingFrames, crossingRules, walkersAt } from '../../test/helpers/crossing-provider.js';
import { analyticsFrameOutput } from '../../test/helpers/analytics-frame-output.js';

const CAMERAS = 4;
const FPS = 2;
const CLIP = 'tracking/vtest_PETS09-S2L1_full/vtest.avi';
const PREFIX = 'sfbench';
/** 480 x 360, where the scene's people walk (x 200-440, feet at y 100-260): lines and zones across it, so the
 * cameras make events every few seconds. */
const RULES = {
  lines: [
    ...[260, 300, 340, 380].map((x) => ({
      id: `x${x}`,
      points: [
        [x, 0],
        [x, 360],
      ],
    })),
    ...[150, 180, 210].map((y) => ({
      id: `y${y}`,
      points: [
        [0, y],
        [480, y],
      ],
    })),
  ],
  zones: [
    [200, 100],
    [320, 100],
    [200, 180],
    [320, 180],
  ].map(([x, y]) => ({
    id: `z${x}_${y}`,
    polygon: [
      [x, y],
      [x + 120, y],
      [x + 120, y + 80],
      [x, y + 80],
    ],
  })),
};

/** The event-loop sampler's period; the histogram holds whole periods, so lateness is a sample less it. */
const LOOP_RESOLUTION_MS = 10;
const lateMs = (ns: number) => Math.round((ns / 1e6 - LOOP_RESOLUTION_MS) * 10) / 10;

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

/** A round's mode: MQTT off, on with a subscriber on every camera's events, or on with no subscriber (diagnostic:
 * the server's publishing and the broker without the subscriber's wake-ups). */
type Mode = 'off' | 'on' | 'nosub';

interface RunRow {
  mode: Mode;
  mqtt: boolean;
  fps_per_camera: number;
  /** Frames per camera per second, unrounded (the noise verdict compares these). */
  fps_exact: number;
  fps_min: number;
  lag_p50_ms: number;
  lag_p95_ms: number;
  /** Where a frame's lag goes, p50 / p95 over the round's frames: from its arrival at the decoder to its chunk
   * handed to the archive (decode, sampling, the inference queue, inference, the analytics and MQTT steps, the
   * task's wait for its previous append), to its append done, and from there to the SSE subscriber. */
  ready_p50_ms: number;
  ready_p95_ms: number;
  append_p50_ms: number;
  append_p95_ms: number;
  delivery_p50_ms: number;
  delivery_p95_ms: number;
  /** Lag of the chunks that carried events, once per event (the same population the MQTT subscriber times). */
  event_chunk_lag_p95_ms: number;
  events: number;
  mqtt_events: number;
  mqtt_p50_ms: number;
  mqtt_p95_ms: number;
  /** Per event: its arrival at the MQTT subscriber minus its chunk's at the SSE subscriber. */
  mqtt_minus_sse_p50_ms: number;
  mqtt_minus_sse_p95_ms: number;
  /** Where the round's CPU went, in % of one core over the round: this process (server, decoders, inference,
   * SSE readers), the broker, the MQTT subscriber's process. */
  cpu_server_pct: number;
  cpu_broker_pct: number;
  cpu_subscriber_pct: number;
  /** The server's event loop: how late its timers ran over the round, p50 / p99 / max. */
  loop_delay_p50_ms: number;
  loop_delay_p99_ms: number;
  loop_delay_max_ms: number;
  /** The server's main thread over the round, in ms a second: in its tasks' CameraPublisher.frame (the
   * messages built and handed to the client), and in garbage collection. */
  publish_ms_per_s: number;
  gc_ms_per_s: number;
  /** The machine's 1-minute load average at the round's end (other work on it included). */
  load: number;
}

/** Main-thread time in the server's CameraPublisher.frame so far (see `timeLivePublishing`). */
let livePublishNs = 0n;

/** Each live frame's chunk as the server's workers archive it: when it was handed over and when it was appended. */
const appends = new Map<string, { received: number; handed: number; appended: number }>();
const appendKey = (taskId: string, frameIndex: number) => `${taskId}/${frameIndex}`;

/** Records when each chunk is handed to the server's archive and appended (the worker in this process). */
function timeAppends(): void {
  const append = StreamArchive.prototype.appendFrame;
  StreamArchive.prototype.appendFrame = async function (
    this: StreamArchive,
    ...args: Parameters<typeof append>
  ): ReturnType<typeof append> {
    const handed = Date.now();
    const o = await append.apply(this, args);
    const [taskId, , frame] = args;
    const received = frame.stream_info.received_at_ms;
    if (received !== undefined)
      appends.set(appendKey(taskId, frame.stream_info.frame_index), { received, handed, appended: Date.now() });
    return o;
  };
}

/**
 * Times every CameraPublisher.frame the server in this process runs (the same module the worker imports),
 * so that a round reports what publishing took on its main thread while live, beside the synthetic figure.
 */
function timeLivePublishing(injectMs: number): void {
  const frame = CameraPublisher.prototype.frame;
  CameraPublisher.prototype.frame = function (this: CameraPublisher, ...args: Parameters<typeof frame>) {
    const t0 = process.hrtime.bigint();
    try {
      frame.apply(this, args);
      // `--inject-ms`: a publishing that costs this much main thread a frame, to show the verdict catches it.
      if (injectMs > 0) {
        const end = t0 + BigInt(Math.round(injectMs * 1e6));
        while (process.hrtime.bigint() < end);
      }
    } finally {
      livePublishNs += process.hrtime.bigint() - t0;
    }
  };
}

/** Four cameras for `seconds` after a warm-up; with `mqtt`, each publishes and a subscriber times events. */
async function cameras(
  t: TestApp,
  url: string,
  seconds: number,
  mode: Mode,
  brokerUrl: string,
  round: number,
  brokerPid: number | undefined,
): Promise<RunRow> {
  const mqtt = mode === 'off' ? null : brokerUrl;
  const sub = mode === 'on' ? await subscriberProcess(brokerUrl, [`${PREFIX}/+/events`]) : null;
  const ids: string[] = [];
  for (let i = 0; i < CAMERAS; i++) {
    const r = await api(t, '/v1/video/process', {
      method: 'POST',
      json: {
        input: [{ type: 'video_url', url, sampling: { mode: 'fps', value: FPS } }],
        steps: [
          { model: 'detect', parameters: { classes: ['person'] } },
          { model: 'analytics', parameters: RULES },
        ],
        ...(mqtt ? { publish: { mqtt: { camera: `cam${round}_${i}` } } } : {}),
      },
    });
    if (r.status !== 202) throw new Error(`camera ${i}: ${r.text}`);
    ids.push(r.body.id as string);
  }
  const warmMs = 4000;
  const started = Date.now();
  const cpu0 = { server: process.cpuUsage(), broker: cpuMs(brokerPid), sub: cpuMs(sub?.pid) };
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcMs += e.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  const publish0 = livePublishNs;
  const from = started + warmMs;
  const until = from + seconds * 1000;
  const processed = new Array<number>(CAMERAS).fill(0);
  const lags: number[] = [];
  const stages = { ready: [] as number[], append: [] as number[], delivery: [] as number[] };
  const eventLags: number[] = [];
  let events = 0;
  /** When each event's chunk reached the SSE subscriber. */
  const sseAt = new Map<string, number>();
  const ac = new AbortController();
  const readers = ids.map(async (id, i) => {
    const res = await fetch(`${t.url}/v1/video/tasks/${id}/stream`, {
      headers: { authorization: `Bearer ${t.key}` },
      signal: ac.signal,
    });
    try {
      for await (const { now, chunks } of sseReads(res.body!)) {
        for (const ch of chunks) {
          const at = ch.stream_info?.received_at_ms;
          if (ch.finish_reason !== null || at === undefined || at < from || at >= until) continue;
          processed[i]!++;
          lags.push(now - at);
          const a = appends.get(appendKey(id, ch.stream_info.frame_index));
          if (a && a.received === at) {
            stages.ready.push(a.handed - at);
            stages.append.push(a.appended - a.handed);
            stages.delivery.push(now - a.appended);
          }
          const n = ch.analytics?.events?.length ?? 0;
          events += n;
          // Once per event, as the MQTT subscriber counts them.
          for (const e of ch.analytics?.events ?? []) {
            sseAt.set(e.id, now);
            eventLags.push(now - at);
          }
        }
      }
    } catch (e) {
      if (!ac.signal.aborted) throw e;
    }
  });
  await new Promise((r) => setTimeout(r, until - Date.now() + 1500));
  loop.disable();
  gc.disconnect();
  const spanMs = Date.now() - started;
  const publishMs = Number(livePublishNs - publish0) / 1e6;
  const serverCpu = process.cpuUsage(cpu0.server);
  const pctOf = (ms: number) => Math.round((ms / spanMs) * 1000) / 10;
  const cpu = {
    server: pctOf((serverCpu.user + serverCpu.system) / 1000),
    broker: pctOf(cpuMs(brokerPid) - cpu0.broker),
    sub: pctOf(cpuMs(sub?.pid) - cpu0.sub),
  };
  ac.abort();
  await Promise.allSettled(readers);
  if (processed.every((n) => n === 0)) {
    const states = await Promise.all(ids.map(async (id) => (await api(t, `/v1/video/tasks/${id}`)).body));
    throw new Error(
      `no camera processed a frame: ${states.map((b) => `${b.status} ${JSON.stringify(b.error)}`).join('; ')}`,
    );
  }
  for (const id of ids) await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
  appends.clear();
  const got = ((await sub?.stop()) ?? [])
    .map((m) => ({ m, e: JSON.parse(m.payload) }))
    .filter(({ e }) => e.received_at_ms >= from && e.received_at_ms < until);
  const mqttDelays = got.map(({ m, e }) => m.at - e.received_at_ms);
  const diffs = got.filter(({ e }) => sseAt.has(e.id)).map(({ m, e }) => m.at - sseAt.get(e.id)!);
  const rates = processed.map((n) => n / seconds);
  return {
    mode,
    mqtt: mqtt !== null,
    fps_per_camera: Math.round((rates.reduce((a, b) => a + b, 0) / CAMERAS) * 100) / 100,
    fps_exact: rates.reduce((a, b) => a + b, 0) / CAMERAS,
    fps_min: Math.round(Math.min(...rates) * 100) / 100,
    lag_p50_ms: Math.round(pct(lags, 0.5)),
    lag_p95_ms: Math.round(pct(lags, 0.95)),
    ready_p50_ms: Math.round(pct(stages.ready, 0.5)),
    ready_p95_ms: Math.round(pct(stages.ready, 0.95)),
    append_p50_ms: Math.round(pct(stages.append, 0.5)),
    append_p95_ms: Math.round(pct(stages.append, 0.95)),
    delivery_p50_ms: Math.round(pct(stages.delivery, 0.5)),
    delivery_p95_ms: Math.round(pct(stages.delivery, 0.95)),
    event_chunk_lag_p95_ms: Math.round(pct(eventLags, 0.95)),
    events,
    mqtt_events: mqttDelays.length,
    mqtt_p50_ms: Math.round(pct(mqttDelays, 0.5)),
    mqtt_p95_ms: Math.round(pct(mqttDelays, 0.95)),
    mqtt_minus_sse_p50_ms: Math.round(pct(diffs, 0.5)),
    mqtt_minus_sse_p95_ms: Math.round(pct(diffs, 0.95)),
    cpu_server_pct: cpu.server,
    cpu_broker_pct: cpu.broker,
    cpu_subscriber_pct: cpu.sub,
    loop_delay_p50_ms: lateMs(loop.percentile(50)),
    loop_delay_p99_ms: lateMs(loop.percentile(99)),
    loop_delay_max_ms: lateMs(loop.max),
    publish_ms_per_s: Math.round((publishMs / spanMs) * 1e4) / 10,
    gc_ms_per_s: Math.round((gcMs / spanMs) * 1e4) / 10,
    load: Math.round(loadavg()[0]! * 10) / 10,
  };
}

/** Main-thread time of CameraPublisher.frame per frame and per event (the engine's own time excluded). */
async function publishCost(
  url: string,
  rounds: number,
): Promise<{ frames: number; events: number; us_per_frame: number; us_per_quiet_frame: number; us_per_event: number }> {
  const pub = new MqttPublisher(
    { url, topicPrefix: `${PREFIX}_cost`, haDiscovery: true, haPrefix: 'homeassistant', queueMessages: 10_000 },
    createLogger('silent'),
  ).start();
  const end = Date.now() + 10_000;
  while (!pub.connected && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  const rules = parseAnalytics(crossingRules(), 'parameters');
  let ns = 0n,
    quietNs = 0n,
    frames = 0,
    quiet = 0,
    events = 0;
  try {
    for (let r = 0; r < rounds; r++) {
      const engine = new AnalyticsEngine(rules, { idPrefix: `cost${r}.ae_` });
      const cam = new CameraPublisher(pub, {
        taskId: `cost${r}`,
        camera: 'cost',
        version: '0',
        rules: () => ({ params: rules, version: engine.version }),
      });
      const n = crossingFrames(12, 9);
      for (let i = 0; i < n; i++) {
        const frame: AnalyticsFrame = {
          t_ms: i * 100,
          frame_index: i,
          width: 640,
          height: 480,
          tracks: walkersAt(i, 12, 9).map(([id, cls, x]) => ({
            track_id: id,
            class: cls,
            box: [x - 10, 260, x + 10, 300] as const,
          })),
        };
        const { events: evs } = engine.process(frame);
        const out = analyticsFrameOutput(
          frame,
          { events: evs, totals: engine.counts() },
          { received_at_ms: Date.now() },
        );
        const t0 = process.hrtime.bigint();
        cam.frame(out, { offset: i * 1000 });
        const took = process.hrtime.bigint() - t0;
        ns += took;
        if (evs.length === 0) {
          quietNs += took;
          quiet++;
        }
        frames++;
        events += evs.length;
        // Let the client write and take acknowledgements as a running server's event loop would.
        if (i % 16 === 0) await new Promise((r) => setImmediate(r));
      }
      cam.close();
    }
  } finally {
    await pub.close();
  }
  const us = Number(ns) / 1000,
    quietUs = Number(quietNs) / 1000;
  // An event's own cost: what frames with events took beyond a frame without any, shared by their events.
  const perQuiet = quietUs / Math.max(1, quiet);
  const perEvent = (us - quietUs - perQuiet * (frames - quiet)) / Math.max(1, events);
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    frames,
    events,
    us_per_frame: r1(us / frames),
    us_per_quiet_frame: r1(perQuiet),
    us_per_event: r1(perEvent),
  };
}

/** `--name value` from the suite's arguments, or undefined. */
function arg(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

export async function run({ quick, json, args }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  const injectMs = Number(arg(args, '--inject-ms') ?? 0);
  if (!(injectMs >= 0 && injectMs <= 200))
    throw new Error(`--inject-ms: expected 0 to 200, got ${arg(args, '--inject-ms')}`);
  const givenOrder = arg(args, '--order')?.split(',');
  if (givenOrder?.some((m) => m !== 'off' && m !== 'on' && m !== 'nosub'))
    throw new Error(`--order: expected off, on and nosub separated by commas, got ${arg(args, '--order')}`);
  const givenSeconds = arg(args, '--seconds');
  if (givenSeconds !== undefined && !(Number(givenSeconds) >= 3 && Number(givenSeconds) <= 120))
    throw new Error(`--seconds: expected 3 to 120, got ${givenSeconds}`);
  const missing = mosquittoMissing();
  if (missing) {
    console.log(`skipped: ${missing}`);
    if (json) console.log(JSON.stringify({ skipped: true, reason: missing }));
    return;
  }
  if (skipWithoutEvalData({ json }, CLIP)) return;
  const seconds = givenSeconds !== undefined ? Number(givenSeconds) : quick ? 5 : 15;
  const broker = await startBroker();
  const t = await startTestApp({
    SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
    SIGHTFLOW_LOG_LEVEL: 'silent',
    SIGHTFLOW_WORKER_CONCURRENCY: String(CAMERAS),
    SIGHTFLOW_MQTT_URL: broker.url,
    SIGHTFLOW_MQTT_TOPIC_PREFIX: PREFIX,
  });
  const rtsp = await startRtspServer(
    await liveClip(join(evalDir('tracking/vtest_PETS09-S2L1_full'), 'vtest.avi'), { fps: 10 }),
  );
  const rows: RunRow[] = [];
  let cost: Awaited<ReturnType<typeof publishCost>>;
  try {
    cost = await publishCost(broker.url, quick ? 20 : 200);
    console.log(
      `publishing on the main thread: ${cost.us_per_frame} us a frame on average over ${cost.frames} frames with ${cost.events} events: ` +
        `${cost.us_per_quiet_frame} us a frame without events, ${cost.us_per_event} us more an event`,
    );
    // A round left out: the first tasks load the detector and warm the JIT, which would count as noise.
    const brokerPid = childPids('mosquitto')[0];
    timeLivePublishing(injectMs);
    timeAppends();
    await cameras(t, rtsp.url, quick ? 4 : 10, 'off', broker.url, -1, brokerPid);
    // Pairs of one round of each mode, the first of a pair drawn at random (bench/mqtt-verdict.ts): 6 pairs
    // let the test reach p = 1/64; the quick run's 2 pairs only check that the bench works.
    const order: Mode[] = givenOrder ? (givenOrder as Mode[]) : pairedOrder<Mode>(quick ? 2 : 6, 'off', 'on');
    console.log(
      `rounds of ${seconds} s: ${order.join(', ')}${injectMs > 0 ? `; publishing made to cost ${injectMs} ms of main thread a frame (--inject-ms)` : ''}`,
    );
    for (const [round, mode] of order.entries()) {
      const r = await cameras(t, rtsp.url, seconds, mode, broker.url, round, brokerPid);
      rows.push(r);
      const on = mode === 'on';
      console.log(
        `MQTT ${mode === 'nosub' ? 'on, no subscriber' : mode === 'on' ? 'on ' : 'off'}: ${CAMERAS} cameras at ${FPS} fps, ${r.fps_per_camera.toFixed(2)} frames/s per camera (min ${r.fps_min.toFixed(2)}); ` +
          `lag p50 ${r.lag_p50_ms} p95 ${r.lag_p95_ms} ms (per event p95 ${r.event_chunk_lag_p95_ms} ms); ${r.events} events` +
          (on
            ? `; at the MQTT subscriber ${r.mqtt_events} events, frame arrival to event p50 ${r.mqtt_p50_ms} p95 ${r.mqtt_p95_ms} ms, ` +
              `after its chunk at the SSE subscriber p50 ${r.mqtt_minus_sse_p50_ms} p95 ${r.mqtt_minus_sse_p95_ms} ms`
            : ''),
      );
      console.log(
        `  CPU over the round (% of a core): server ${r.cpu_server_pct}, broker ${r.cpu_broker_pct}, subscriber ${r.cpu_subscriber_pct}; ` +
          `server event loop delay p50 ${r.loop_delay_p50_ms} p99 ${r.loop_delay_p99_ms} max ${r.loop_delay_max_ms} ms; ` +
          `main thread in publishing ${r.publish_ms_per_s} ms/s, in GC ${r.gc_ms_per_s} ms/s; load average ${r.load}`,
      );
      console.log(
        `  where the lag goes, p50 / p95 ms: arrival to the chunk handed to the archive ${r.ready_p50_ms} / ${r.ready_p95_ms}, ` +
          `append ${r.append_p50_ms} / ${r.append_p95_ms}, appended to the SSE subscriber ${r.delivery_p50_ms} / ${r.delivery_p95_ms}`,
      );
    }
  } finally {
    await rtsp.close();
    await t.close();
    await broker.close();
  }
  const on = rows.filter((r) => r.mode === 'on'),
    off = rows.filter((r) => r.mode === 'off');
  // The i-th on round with the i-th off round: with the default order, the two rounds of a pair.
  const n = Math.min(on.length, off.length);
  const pairOn = on.slice(0, n),
    pairOff = off.slice(0, n);
  // Frames: fewer with MQTT on is worse, so off over on is what the test weighs.
  const fps = pairedVerdict(
    pairOff.map((r) => r.fps_exact),
    pairOn.map((r) => r.fps_exact),
  );
  const lag = pairedVerdict(
    pairOn.map((r) => r.lag_p95_ms),
    pairOff.map((r) => r.lag_p95_ms),
  );
  const f3 = (x: number) => x.toFixed(3);
  // The issue's bound: a frame's events reach an MQTT subscriber within the pipeline's own lag (its chunk's
  // at an SSE subscriber, p95 over the frames that had events) plus 50 ms.
  const overLag = Math.max(...on.map((r) => r.mqtt_p95_ms - r.event_chunk_lag_p95_ms));
  const nosub = rows.filter((r) => r.mode === 'nosub');
  console.log(
    `on / off over ${n} pairs (geometric mean): frames per camera ${f3(1 / fps.ratio)}x (p = ${f3(fps.p)}), ` +
      `lag p95 ${f3(lag.ratio)}x (p = ${f3(lag.p)}; per pair ${pairOn.map((r, i) => `${r.lag_p95_ms}/${pairOff[i]!.lag_p95_ms}`).join(', ')} ms); ` +
      `MQTT p95 minus the event chunks' lag p95 at most ${overLag} ms (bound: 50 ms)` +
      (nosub.length > 0 ? `; lag p95 with no subscriber ${nosub.map((r) => r.lag_p95_ms).join(', ')} ms` : ''),
  );
  console.log(
    `within noise: ${fps.within && lag.within ? 'yes' : 'no'} (frames ${fps.within ? 'yes' : 'no'}, lag p95 ${lag.within ? 'yes' : 'no'}; ` +
      `rule: an exact one-sided sign-flip test over the pairs finds MQTT on worse at p < 0.05` +
      (lag.p_min >= 0.05
        ? `; with ${n} pairs it cannot (smallest p ${f3(lag.p_min)}), so this run only checks the bench`
        : '') +
      `)`,
  );
  if (json) {
    console.log(
      JSON.stringify({
        suite: 'mqtt',
        cameras: CAMERAS,
        fps: FPS,
        seconds,
        runs: rows,
        peer: 'the same cameras with MQTT off',
        order: rows.map((r) => r.mode),
        inject_ms: injectMs,
        ratio: Math.round((1 / fps.ratio) * 1000) / 1000,
        fps_p: Math.round(fps.p * 1000) / 1000,
        lag_p95_ratio: Math.round(lag.ratio * 1000) / 1000,
        lag_p95_p: Math.round(lag.p * 1000) / 1000,
        within_noise: fps.within && lag.within,
        mqtt_p95_over_lag_ms: overLag,
        publish_cost: cost!,
      }),
    );
  }
}
