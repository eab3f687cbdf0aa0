// `npm run bench -- fanout [--quick] [--json]`: what live readers of one task cost the task.
//  1. Same node (PGlite): a real detect task (TUD-Stadtmitte, every frame at 25 fps, 179 frames or --frames=N; without that
//     sequence the first 179 frames of vtest.avi) through the in-process worker, with 0, 50, 300 and 1000
//     readers of its stream connected while it runs (--quick: 0 and 20 readers on 20 frames). The
//     baseline is the same task with no reader, run first and last in the same run (its mean). Reported per
//     reader count: task time (created_at -> finished_at of the task record) and its ratio to the baseline,
//     delivery lag (the commit of a chunk in the archive to its last byte at a reader: p50/p95/max over every
//     reader and every chunk committed after that reader's response began), joining (how long after its
//     response began a reader held every chunk committed before it: p95/max over readers; 1000 readers
//     take a while to connect while the task runs, and counting those chunks as lag made the lag's tail the
//     connection phase's), the server's peak RSS, and whether every reader's bytes are the archive's.
//  2. Two nodes over PostgreSQL (a throwaway cluster; skipped when PostgreSQL's binaries are missing): the
//     task runs on node A, the readers read node B, a separate process (so B's work is not on A's CPU
//     thread); the same figures, the lag measured from A's commit.
//  3. Stalled readers: a synthetic task of large chunks (1200 frames of 40 targets; --quick 200) with 200 readers
//     (--quick 20), half of which stop reading after their first bytes: the server's RSS over the task
//     (flat: what a stalled reader holds is bounded), whether the task time moved, and the stalled readers'
//     bytes (an archive prefix ending on an event boundary, whether cut off or resumed).
// Readers are raw HTTP/1.1 sockets in a child process (this file run with `client`), so the RSS sampled here
// is the server's own and the reader side costs as little CPU as a reader can: they run in
// bench/peers/sse-readers.c (compiled with cc at the start; one epoll loop, the same checks and timings),
// which take far less CPU than Node.js sockets for the same readers (--node-readers uses those). In part 2
// the child process hosts node B and the C readers read it.
// --reader-nice=N runs the reader process at a lower CPU priority (readers standing for clients on other
// machines; in part 2 it also hosts node B, a server, so it keeps the server's priority there). Not the
// default: at nice 19 the task time with 1000 readers was no better and the lag p95 several times that at the
// same priority, since the lag is measured at the readers and includes their own waits for a core. The figures
// behind these choices: (docs/benchmarks.md, "Why the benches are built this way").
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setPriority, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { evalDir, hasEvalData, skipWithoutEvalData } from '../../eval/dir.js';
import { compilePeer } from '../peers/compile.js';
import { scriptArgs } from '../../test/helpers/node-script.js';

const SELF = fileURLToPath(import.meta.url);
const now = () => performance.timeOrigin + performance.now();
const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;
const mb = (b: number) => round(b / 2 ** 20, 1);
const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

// ---------------------------------------------------------------------------------------------------------
// The reader side (child process).

interface ClientConfig {
  port: number;
  key: string;
  n: number;
  stall: number;
  node?: { databaseUrl: string; dataDir: string };
  native?: string;
}
interface ReaderOut {
  bytes: number;
  same: boolean;
  times: number[];
  done: boolean;
  stalled: boolean /** When the response head was complete (ms since the epoch; 0: never). */;
  head: number;
}

/**
 * The bytes readers have received so far, each position as the first reader to reach it got it. Every reader
 * compares what it gets with this (a memcmp: hashing every reader's copy cost the shared 2 cores more CPU than
 * the server's own fan-out, and slowed the task being measured); at the end it is compared with the archive.
 */
class Reference {
  buf = Buffer.alloc(1 << 20);
  len = 0;
  /** Compares `b`, received at `offset`, with what is known; appends what goes past. False on a difference. */
  check(offset: number, b: Buffer): boolean {
    const overlap = Math.max(0, Math.min(this.len - offset, b.length));
    if (overlap > 0 && !b.subarray(0, overlap).equals(this.buf.subarray(offset, offset + overlap))) return false;
    if (offset > this.len) return false;
    if (b.length > overlap) {
      const need = offset + b.length;
      if (need > this.buf.length) {
        const grown = Buffer.alloc(Math.max(need, this.buf.length * 2));
        this.buf.copy(grown, 0, 0, this.len);
        this.buf = grown;
      }
      b.copy(this.buf, this.len, overlap);
      this.len = need;
    }
    return true;
  }
}

/** One reader: GET the stream over a raw socket, de-chunk, compare with `ref`, and time every event's arrival. */
function reader(
  port: number,
  key: string,
  id: string,
  stall: boolean,
  ref: Reference,
  onStalled: (resume: () => void) => void,
): Promise<ReaderOut> {
  return new Promise((resolve) => {
    const sock: Socket = connect(port, '127.0.0.1');
    const times: number[] = [];
    let head = Buffer.alloc(0),
      headerDone = false,
      headAt = 0,
      bytes = 0,
      lastByte = 0,
      same = true;
    // Chunked decoding state: bytes left in the current chunk, or -1 while reading a size line.
    let left = -1,
      line = '',
      skipCrlf = 0,
      finished = false,
      stalledOnce = false;
    const payload = (b: Buffer) => {
      if (same) same = ref.check(bytes, b);
      bytes += b.length;
      const t = now();
      // Event ends ("\n\n"), including one split across two payloads.
      if (lastByte === 10 && b[0] === 10) times.push(t);
      for (let i = b.indexOf('\n\n'); i >= 0; i = b.indexOf('\n\n', i + 2)) times.push(t);
      lastByte = b[b.length - 1]!;
    };
    const feed = (d: Buffer) => {
      let i = 0;
      while (i < d.length && !finished) {
        if (skipCrlf > 0) {
          skipCrlf--;
          i++;
          continue;
        }
        if (left < 0) {
          const c = d[i++]!;
          if (c === 10) {
            left = parseInt(line, 16);
            line = '';
            if (left === 0) finished = true;
          } else if (c !== 13) line += String.fromCharCode(c);
          continue;
        }
        const take = Math.min(left, d.length - i);
        payload(d.subarray(i, i + take));
        i += take;
        left -= take;
        if (left === 0) {
          left = -1;
          skipCrlf = 2;
        }
      }
    };
    sock.on('connect', () =>
      sock.write(
        `GET /v1/video/tasks/${id}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`,
      ),
    );
    sock.on('data', (d: Buffer) => {
      if (!headerDone) {
        head = Buffer.concat([head, d]);
        const e = head.indexOf('\r\n\r\n');
        if (e < 0) return;
        headerDone = true;
        headAt = now();
        d = head.subarray(e + 4);
      }
      feed(d);
      if (finished) sock.end();
      else if (stall && !stalledOnce && bytes > 0) {
        stalledOnce = true;
        sock.pause();
        onStalled(() => sock.resume());
      }
    });
    const end = () => resolve({ bytes, same, times, done: finished, stalled: stall, head: headAt });
    sock.on('close', end);
    sock.on('error', () => {});
  });
}

/**
 * The live readers of one task in the compiled C reader (bench/peers/sse-readers.c): the same requests, checks
 * and timings as reader(), at a fraction of the CPU. `over` resolves when the stalled readers may read again.
 */
async function nativeReaders(
  exe: string,
  port: number,
  key: string,
  id: string,
  n: number,
  stall: number,
  ref: Reference,
  over: Promise<unknown>,
): Promise<{ outs: ReaderOut[]; cpuS: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-fanout-ref-'));
  try {
    const refFile = join(dir, 'ref');
    const child = spawn(exe, [String(port), key, id, String(n), String(stall), refFile], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const chunks: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => chunks.push(d));
    const closed = new Promise<number | null>((r) => child.on('close', r));
    if (stall > 0) void over.then(() => child.stdin!.write('over\n'));
    const code = await closed;
    if (code !== 0) throw new Error(`sse-readers exited with ${code}`);
    const out = JSON.parse(Buffer.concat(chunks).toString()) as { cpu_s: number; readers: ReaderOut[] };
    const bytes = readFileSync(refFile);
    ref.buf = bytes;
    ref.len = bytes.length;
    return { outs: out.readers, cpuS: out.cpu_s };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function clientMain(cfg: ClientConfig): Promise<void> {
  let port = cfg.port;
  let closeNode: (() => Promise<void>) | null = null;
  if (cfg.node) {
    const { startTestApp } = await import('../../test/helpers/app.js');
    const b = await startTestApp(
      { SIGHTFLOW_NO_WORKER: 'true', SIGHTFLOW_LOG_LEVEL: 'silent', SIGHTFLOW_KEY_CACHE_MS: '3600000' },
      { databaseUrl: cfg.node.databaseUrl, dataDir: cfg.node.dataDir },
    );
    port = b.app.port;
    closeNode = () => b.close();
  }
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 100);
  const lines = createInterface({ input: process.stdin });
  const next = () => new Promise<string>((r) => lines.once('line', r));
  console.log('ready');
  const id = (await next()).trim();
  const paused: Array<() => void> = [];
  const shared = new Reference();
  let nativeCpuS = 0;
  const outs = cfg.native
    ? await (async () => {
        const r = await nativeReaders(
          cfg.native!,
          port,
          cfg.key,
          id,
          cfg.n,
          cfg.stall,
          shared,
          cfg.stall > 0 ? next() : Promise.resolve(),
        );
        nativeCpuS = r.cpuS;
        return r.outs;
      })()
    : await (async () => {
        const all = Array.from({ length: cfg.n }, (_, i) =>
          reader(port, cfg.key, id, i < cfg.stall, shared, (resume) => paused.push(resume)),
        );
        if (cfg.stall > 0) {
          // The parent says when the task is over; the stalled readers then read what the server still has for them.
          await next();
          for (const r of paused) r();
        }
        return Promise.all(all);
      })();
  clearInterval(sampler);
  // The archive as a reader that arrives after the end gets it (compared with the live readers' bytes too).
  const late = await reader(port, cfg.key, id, false, shared, () => {});
  const archive = await (async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/video/tasks/${id}/stream`, {
      headers: { authorization: `Bearer ${cfg.key}` },
    });
    const buf = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`the archive read answered ${res.status}: ${buf.toString()}`);
    return buf;
  })();
  // Every reader's bytes equal the reference's prefix (checked as they came); the reference equals the archive.
  const refOk =
    shared.len <= archive.length && shared.buf.subarray(0, shared.len).equals(archive.subarray(0, shared.len));
  const prefixOk = (o: ReaderOut) => refOk && o.same && o.bytes <= archive.length;
  const whole = (o: ReaderOut) => prefixOk(o) && o.bytes === archive.length && o.done;
  const onBoundary = (o: ReaderOut) => o.bytes === 0 || archive.subarray(o.bytes - 2, o.bytes).toString() === '\n\n';
  const live = outs.filter((o) => !o.stalled);
  const stalled = outs.filter((o) => o.stalled);
  const eventEnds: number[] = [];
  for (let i = archive.indexOf('\n\n'); i >= 0; i = archive.indexOf('\n\n', i + 2)) eventEnds.push(i + 2);
  const line = JSON.stringify({
    eventEnds,
    archiveBytes: archive.length,
    archiveHash: createHash('sha256').update(archive).digest('hex'),
    identical: whole(late) ? live.filter(whole).length : 0,
    live: live.length,
    stalledPrefixOk: stalled.filter(prefixOk).length,
    stalledOnBoundary: stalled.filter((o) => prefixOk(o) && onBoundary(o)).length,
    stalledComplete: stalled.filter((o) => o.done).length,
    stalled: stalled.length,
    times: live.map((o) => o.times.map((t) => Math.round(t))),
    heads: live.map((o) => Math.round(o.head)),
    readerNodeRssMb: mb(peak),
    readerCpuS: round((process.cpuUsage().user + process.cpuUsage().system) / 1e6 + nativeCpuS),
  });
  await closeNode?.();
  // A large line: exit only once the pipe has taken all of it.
  process.stdout.write(`${line}\n`, () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------------------
// The server side.

type Harness = typeof import('../../test/helpers/app.js');
interface Client {
  child: ChildProcess;
  send(line: string): void;
  result: Promise<ClientResult>;
}
interface ClientResult {
  eventEnds: number[];
  archiveBytes: number;
  identical: number;
  live: number;
  stalledPrefixOk: number;
  stalledOnBoundary?: number;
  stalledComplete: number;
  stalled: number;
  times: number[][];
  heads?: number[];
  readerNodeRssMb: number;
  readerCpuS: number;
}

/** The reader process's nice value (set by run()). */
let readerNice = 0;
/** The compiled C reader (set by run()); undefined: the readers run in Node.js. */
let nativeExe: string | undefined;

async function startClient(cfg: ClientConfig): Promise<Client> {
  const child = spawn(
    process.execPath,
    [...scriptArgs(SELF), 'client', JSON.stringify({ ...cfg, native: nativeExe })],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  // Only a process of readers alone: one that also hosts node B is a server, at the server's priority.
  if (readerNice !== 0 && !cfg.node && child.pid !== undefined) setPriority(child.pid, readerNice);
  const lines = createInterface({ input: child.stdout! });
  let last = '';
  let readyResolve!: () => void;
  const ready = new Promise<void>((r) => {
    readyResolve = r;
  });
  lines.on('line', (l) => {
    if (l === 'ready') readyResolve();
    else last = l;
  });
  const result = new Promise<ClientResult>((resolve, reject) =>
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the reader process exited with ${code}`));
      resolve(JSON.parse(last) as ClientResult);
    }),
  );
  await Promise.race([ready, result]);
  return { child, send: (l) => child.stdin!.write(`${l}\n`), result };
}

interface RunResult {
  readers: number;
  seconds: number;
  serverCpuS: number;
  readerCpuS?: number;
  ratio?: number;
  lagP50: number;
  lagP95: number;
  lagMax: number;
  joinP95?: number;
  joinMax?: number;
  loopP99?: number;
  loopMax?: number;
  rssMb: number;
  identical: boolean;
  readerNodeRssMb?: number;
}

/**
 * One task with `n` readers; `node` puts the readers on a second API node (in the reader process).
 * `commitsOf` gives the commit times of the task's appends on the producing node.
 */
async function oneTask(
  h: Harness,
  app: Awaited<ReturnType<Harness['startTestApp']>>,
  body: unknown,
  n: number,
  opts: { node?: ClientConfig['node']; stall?: number } = {},
): Promise<RunResult & { client: ClientResult | null; rssSeries: number[] }> {
  const { hubFor } = await import('../../src/video/stream/stream-hub.js');
  const client =
    n > 0 ? await startClient({ port: app.app.port, key: app.key, n, stall: opts.stall ?? 0, node: opts.node }) : null;
  const cpu0 = process.cpuUsage();
  // How long the server's event loop was held at a time (its other requests wait that long).
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  let peak = process.memoryUsage().rss;
  const rssSeries: number[] = [];
  const sampler = setInterval(() => {
    const r = process.memoryUsage().rss;
    peak = Math.max(peak, r);
    rssSeries.push(r);
  }, 100);
  const created = await h.api(app, '/v1/video/process', { method: 'POST', json: body });
  if (created.status !== 202) throw new Error(`POST /v1/video/process: ${created.status} ${created.text}`);
  const id = created.body.id as string;
  // Commit times by the archive end they made (the first time heard: PostgreSQL also echoes them back).
  const commits = new Map<number, number>();
  const off = hubFor(app.app.services).onTask(id, (end) => {
    if (end !== null && !commits.has(end)) commits.set(end, now());
  });
  client?.send(id);
  let rec: any;
  for (;;) {
    rec = (await h.api(app, `/v1/video/tasks/${id}`)).body;
    if (['succeeded', 'failed', 'cancelled'].includes(rec?.status)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  off();
  if (rec.status !== 'succeeded') throw new Error(`the task ended ${rec.status}: ${JSON.stringify(rec.error)}`);
  if (opts.stall) client?.send('over');
  const res = client ? await client.result : null;
  clearInterval(sampler);
  loop.disable();
  const cpu = process.cpuUsage(cpu0);
  const seconds = (Date.parse(rec.finished_at) - Date.parse(rec.created_at)) / 1000;
  // A reader's k-th event ends at eventEnds[k] in the archive; a commit is matched by the end it made. The
  // delivery lag is over the chunks committed once the reader's response had begun (live delivery); what was
  // committed before it is the reader's joining: how long after its response began it held all of that.
  const lags: number[] = [];
  const joins: number[] = [];
  const at = new Map<number, number>();
  (res?.eventEnds ?? []).forEach((e, k) => at.set(e, k));
  (res?.times ?? []).forEach((times, i) => {
    const head = res?.heads?.[i] || -Infinity;
    let caughtUp = head;
    for (const [end, t] of commits) {
      const k = at.get(end);
      if (k === undefined || times[k] === undefined) continue;
      if (t >= head) lags.push(times[k]! - t);
      else caughtUp = Math.max(caughtUp, times[k]!);
    }
    if (Number.isFinite(head)) joins.push(caughtUp - head);
  });
  return {
    readers: n,
    seconds,
    serverCpuS: round((cpu.user + cpu.system) / 1e6),
    readerCpuS: res?.readerCpuS,
    lagP50: round(pct(lags, 0.5), 1),
    lagP95: round(pct(lags, 0.95), 1),
    lagMax: round(lags.length ? lags.reduce((a, b) => Math.max(a, b), -Infinity) : NaN, 1),
    joinP95: round(pct(joins, 0.95), 1),
    joinMax: round(joins.length ? Math.max(...joins) : NaN, 1),
    loopP99: round(loop.percentile(99) / 1e6, 1),
    loopMax: round(loop.max / 1e6, 1),
    rssMb: mb(peak),
    identical: !res || (res.identical === res.live && res.archiveBytes > 0),
    readerNodeRssMb: opts.node ? res?.readerNodeRssMb : undefined,
    client: res,
    rssSeries,
  };
}

function videoBody(quick: boolean, framesArg?: number): { body: unknown; label: string } {
  const stadt = 'tracking/TUD-Stadtmitte/TUD-Stadtmitte.mp4';
  const [file, label] = hasEvalData(stadt)
    ? [join(evalDir('tracking/TUD-Stadtmitte'), 'TUD-Stadtmitte.mp4'), 'TUD-Stadtmitte']
    : [join(evalDir('tracking/vtest_PETS09-S2L1_full'), 'vtest.avi'), 'vtest.avi (TUD-Stadtmitte missing)'];
  const frames = framesArg ?? (quick ? 20 : 179);
  return {
    label: `${label}, ${frames} frames`,
    body: {
      input: [
        {
          type: 'video_base64',
          data: readFileSync(file).toString('base64'),
          sampling: { mode: 'fps', value: 25 },
          max_frames: frames,
        },
      ],
      steps: [{ model: 'detect' }],
    },
  };
}

/**
 * Reader counts in order, each between two runs without readers: a count's ratio is to the mean of the two
 * baselines around it. Back-to-back runs of the same task on this machine differ (the first after a warm-up, a
 * checkpoint, the previous run's readers still closing) by more than the effect measured, so each count is
 * compared with its neighbours rather than with a baseline minutes away
 * (docs/benchmarks.md, "Why the benches are built this way").
 */
async function sweep(
  h: Harness,
  app: Awaited<ReturnType<Harness['startTestApp']>>,
  body: unknown,
  counts: number[],
  node?: ClientConfig['node'],
): Promise<RunResult[]> {
  const base: RunResult[] = [await oneTask(h, app, body, 0, { node })];
  const out: Array<RunResult & { ratio: number }> = [];
  for (const n of counts) {
    const { client: _c, rssSeries: _s, ...r } = await oneTask(h, app, body, n, { node });
    const after = await oneTask(h, app, body, 0, { node });
    const around = (base.at(-1)!.seconds + after.seconds) / 2;
    base.push(after);
    out.push({ ...r, ratio: round(r.seconds / around, 3) });
  }
  const baseline = base.reduce((a, b) => a + b.seconds, 0) / base.length;
  const baseCpu = base.reduce((a, b) => a + b.serverCpuS, 0) / base.length;
  const rows: RunResult[] = [
    {
      readers: 0,
      seconds: round(baseline),
      serverCpuS: round(baseCpu),
      ratio: 1,
      lagP50: NaN,
      lagP95: NaN,
      lagMax: NaN,
      rssMb: NaN,
      identical: true,
    },
    ...out.map((r) => ({ ...r, seconds: round(r.seconds) })),
  ];
  for (const r of rows) {
    console.log(
      `  ${String(r.readers).padStart(4)} readers: task ${r.seconds.toFixed(2)} s (${r.readers === 0 ? `mean of ${base.map((b) => b.seconds.toFixed(2)).join(', ')} s` : `${r.ratio!.toFixed(3)}x the runs without readers around it`}), server CPU ${r.serverCpuS} s` +
        (r.readers
          ? `, reader process CPU ${r.readerCpuS} s, lag p50 ${r.lagP50} p95 ${r.lagP95} max ${r.lagMax} ms (live chunks), joining: all earlier chunks p95 ${r.joinP95} max ${r.joinMax} ms after the response began, event loop delay p99 ${r.loopP99} max ${r.loopMax} ms, server RSS ${r.rssMb} MB${r.readerNodeRssMb ? ` (reader node ${r.readerNodeRssMb} MB)` : ''}, bytes ${r.identical ? 'identical to the archive' : 'DIFFER'}`
          : ''),
    );
  }
  return rows;
}

async function stallScenario(h: Harness, quick: boolean) {
  const { SyntheticProvider } = await import('../../test/helpers/synthetic-provider.js');
  const app = await h.startTestApp(
    { SIGHTFLOW_LOG_LEVEL: 'silent' },
    { videoProviders: () => [new SyntheticProvider()] },
  );
  try {
    const frames = quick ? 200 : 1200;
    const body = {
      input: [
        {
          type: 'video_url',
          url: `http://127.0.0.1:9/fanout.mp4?frames=${frames}&frame_ms=4&targets=40`,
          max_frames: frames + 1,
        },
      ],
      steps: [{ model: 'detect' }],
    };
    const n = quick ? 20 : 200;
    const base = await oneTask(h, app, body, 0);
    const r = await oneTask(h, app, body, n, { stall: n / 2 });
    const s = r.rssSeries;
    const q = Math.max(1, Math.floor(s.length / 4));
    const firstQ = Math.max(...s.slice(0, q)),
      lastQ = Math.max(...s.slice(-q));
    const c = r.client!;
    const out = {
      readers: n,
      stalled: c.stalled,
      stream_mb: mb(c.archiveBytes),
      seconds: round(r.seconds),
      baseline_seconds: round(base.seconds),
      ratio: round(r.seconds / base.seconds, 3),
      rss_first_quarter_mb: mb(firstQ),
      rss_last_quarter_mb: mb(lastQ),
      rss_peak_mb: r.rssMb,
      identical: r.identical,
      stalled_prefix_ok: c.stalledPrefixOk,
      stalled_on_event_boundary: c.stalledOnBoundary,
      stalled_complete: c.stalledComplete,
      lag_p95_ms: r.lagP95,
    };
    console.log(
      `stalled readers: ${n} readers of a ${out.stream_mb} MB stream, ${c.stalled} stop reading after their first bytes: task ${out.seconds} s (${out.ratio}x the ${out.baseline_seconds} s without readers); ` +
        `server RSS ${out.rss_first_quarter_mb} MB (max over the first quarter) -> ${out.rss_last_quarter_mb} MB (last quarter), peak ${out.rss_peak_mb} MB; ` +
        `the reading half ${r.identical ? 'got the archive exactly' : 'DIFFERS'} (lag p95 ${r.lagP95} ms); the stalled half, resumed after the end: ${c.stalledPrefixOk}/${c.stalled} an exact archive prefix (${c.stalledOnBoundary} ending on an event boundary), ${c.stalledComplete} complete`,
    );
    return out;
  } finally {
    await app.close();
  }
}

function havePostgres(): boolean {
  return existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').length > 0;
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  // --part=same|cross|stall runs one part (while working on one).
  const part = args.find((a) => a.startsWith('--part='))?.slice(7);
  const want = (p: string) => !part || part === p;
  const nice = args.find((a) => a.startsWith('--reader-nice='));
  if (nice) readerNice = Math.max(0, Math.min(19, Math.trunc(Number(nice.slice(14))) || 0));
  if (readerNice)
    console.log(
      `readers in a child process at nice ${readerNice} (they stand for clients on other machines; with node B in it, at the server's priority)`,
    );
  if (
    !hasEvalData('tracking/TUD-Stadtmitte/TUD-Stadtmitte.mp4') &&
    skipWithoutEvalData({ json }, 'tracking/vtest_PETS09-S2L1_full/vtest.avi')
  )
    return;
  // --node-readers: the readers as Node.js sockets instead of the C reader (to compare what they cost).
  const compiled = args.includes('--node-readers') ? null : compilePeer('sse-readers', 'readers');
  nativeExe = compiled?.exe;
  if (compiled) process.once('exit', () => rmSync(compiled.dir, { recursive: true, force: true }));
  console.log(`readers: ${nativeExe ? 'the C reader (bench/peers/sse-readers.c)' : 'Node.js sockets'}`);
  const h: Harness = await import('../../test/helpers/app.js');
  // --readers=a,b,c: other reader counts than 50, 300 and 1000 (20 with --quick).
  const countsArg = args.find((a) => a.startsWith('--readers='));
  const counts = countsArg
    ? countsArg
        .slice(10)
        .split(',')
        .map(Number)
        .filter((n) => Number.isInteger(n) && n > 0)
    : quick
      ? [20]
      : [50, 300, 1000];
  // --frames=N: a shorter task than the sequence's 179 frames (on a loaded machine).
  const framesArg = args.find((a) => a.startsWith('--frames='));
  const { body, label } = videoBody(quick, framesArg ? Math.max(3, Number(framesArg.slice(9))) : undefined);
  const warm = { ...(body as any), input: [{ ...(body as any).input[0], max_frames: 3 }] };

  console.log(`same node (PGlite): detect on ${label}`);
  let same: RunResult[] = [];
  const app = want('same') ? await h.startTestApp({ SIGHTFLOW_LOG_LEVEL: 'silent' }) : null;
  if (app)
    try {
      await oneTask(h, app, warm, 0);
      same = await sweep(h, app, body, counts);
    } finally {
      await app.close();
    }

  let cross: RunResult[] | null = null;
  if (!want('cross')) {
    // not asked for
  } else if (havePostgres()) {
    const { startCluster, stopCluster } = await import('../../test/helpers/pg-cluster.js');
    const cluster = await startCluster();
    const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-fanout-'));
    try {
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      await admin.query('CREATE DATABASE sf_fanout');
      await admin.end();
      const databaseUrl = cluster.url.replace(/\/[^/]*$/, '/sf_fanout');
      const a = await h.startTestApp(
        { SIGHTFLOW_LOG_LEVEL: 'silent', SIGHTFLOW_KEY_CACHE_MS: '3600000' },
        { databaseUrl, dataDir },
      );
      try {
        console.log(`two nodes (PostgreSQL): the task on node A, the readers on node B; detect on ${label}`);
        await oneTask(h, a, warm, 0);
        cross = await sweep(h, a, body, counts, { databaseUrl, dataDir });
      } finally {
        await a.close();
      }
    } finally {
      stopCluster(cluster.dir);
      rmSync(dataDir, { recursive: true, force: true });
    }
  } else {
    console.log('two nodes: skipped (no PostgreSQL binaries under /usr/lib/postgresql)');
  }

  const stall = want('stall') ? await stallScenario(h, quick) : null;
  const worst = (rows: RunResult[] | null) => (rows ? Math.max(...rows.map((r) => r.ratio ?? 1)) : null);
  console.log(
    `worst task time ratio with readers: same node ${worst(same.length ? same : null)}x${cross ? `, two nodes ${worst(cross)}x` : ''}`,
  );
  if (json) {
    const slim = (rows: RunResult[] | null) =>
      rows?.map((r) => ({
        readers: r.readers,
        seconds: r.seconds,
        ratio: r.ratio,
        lag_p50_ms: r.lagP50,
        lag_p95_ms: r.lagP95,
        lag_max_ms: r.lagMax,
        join_p95_ms: r.joinP95,
        join_max_ms: r.joinMax,
        loop_delay_p99_ms: r.loopP99,
        loop_delay_max_ms: r.loopMax,
        server_rss_mb: r.rssMb,
        identical: r.identical,
        ...(r.readerNodeRssMb ? { reader_node_rss_mb: r.readerNodeRssMb } : {}),
      })) ?? null;
    console.log(
      JSON.stringify({
        suite: 'fanout',
        video: label,
        reader_nice: readerNice,
        sightflow: {
          worst_ratio_same_node: worst(same),
          worst_ratio_two_nodes: worst(cross),
          lag_p95_ms_max_readers: same.at(-1)?.lagP95 ?? null,
        },
        peer: { name: 'same task, no reader', seconds: same[0]?.seconds ?? null },
        ratio: worst(same),
        same_node: slim(same),
        two_nodes: slim(cross),
        stalled: stall,
      }),
    );
  }
}

if (process.argv[2] === 'client' && pathToFileURL(process.argv[1] ?? '').href === import.meta.url) {
  await clientMain(JSON.parse(process.argv[3]!) as ClientConfig);
}
