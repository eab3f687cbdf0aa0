// Real live video sources on loopback for the live-video tests and the live bench: an RTSP server
// (GStreamer's gst-rtsp-server, rtsp_server.py beside this file), a live HLS playlist written by FFmpeg
// (-re, a short sliding window, old segments deleted) served over HTTP, and an endless MPEG-TS response.
// Each loops a pre-encoded H.264 clip in real time, so none needs an encoder while it runs. Everything it
// starts is stopped by close() and, as a last resort, when the test process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { makeMedia } from './media.js';
import { stablePort } from './ports.js';

const RTSP_SCRIPT = fileURLToPath(new URL('./rtsp_server.py', import.meta.url));
/** Debian's interpreter: the GStreamer bindings (python3-gi) are installed for it, not for other Pythons. */
const PYTHON = '/usr/bin/python3';

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

function track(c: ChildProcess): ChildProcess {
  children.add(c);
  c.on('exit', () => children.delete(c));
  return c;
}

function stop(c: ChildProcess | null): Promise<void> {
  if (!c || c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    c.once('exit', () => resolve());
    c.kill('SIGKILL');
  });
}

/** H.264 as cameras send it: no B-frames (decode order = presentation order), a key frame every `fps` frames. */
const x264NoBFrames = (fps: number) => ['-c:v', 'libx264', '-preset', 'ultrafast', '-bf', '0', '-g', String(fps)];

/**
 * `src` re-encoded for live serving: H.264 without B-frames (decode order = presentation order, as from
 * most cameras), a key frame every second, `fps` frames per second, at most `height` lines. It plays
 * forwards then backwards, so looping it has no jump that would break every track at the loop. Memoised.
 */
export function liveClip(src: string, opts: { fps?: number; height?: number; seconds?: number } = {}): Promise<string> {
  const fps = opts.fps ?? 25;
  const scale = opts.height ? `,scale=-2:${opts.height}` : '';
  const limit = opts.seconds ? ['-t', String(opts.seconds)] : [];
  return makeMedia(`live_${basename(src).replace(/\W/g, '_')}_${fps}_${opts.height ?? 0}_${opts.seconds ?? 0}.mp4`, [
    '-i',
    src,
    ...limit,
    '-filter_complex',
    `[0:v]split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1${scale}`,
    '-r',
    String(fps),
    '-an',
    ...x264NoBFrames(fps),
    '-keyint_min',
    String(fps),
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
  ]);
}

/** A synthetic 720p clip (testsrc, 25 fps unless told) for benches without the evaluation data. */
export const synthetic720p = (seconds = 10, fps = 25) =>
  makeMedia(`testsrc_720p_${seconds}s_${fps}fps.mp4`, [
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=1280x720:rate=${fps}:duration=${seconds}`,
    ...x264NoBFrames(fps),
    '-pix_fmt',
    'yuv420p',
  ]);

export interface RtspSource {
  url: string;
  /** The server stops sending frames but keeps the connection (a frozen camera). */
  stall(): void;
  resume(): void;
  /** Kills the server (connections drop at once). */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function spawnRtsp(clip: string, port: number): Promise<{ child: ChildProcess; port: number }> {
  const child = track(spawn(PYTHON, [RTSP_SCRIPT, clip, String(port)], { stdio: ['pipe', 'pipe', 'pipe'] }));
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const lines = createInterface({ input: child.stdout! });
  const bound = await new Promise<number>((resolve, reject) => {
    lines.on('line', (line) => {
      const m = /^READY (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) =>
      reject(new Error(`rtsp_server.py exited (${code}) before it was ready: ${stderr.slice(-500)}`)),
    );
    child.once('error', reject);
  });
  return { child, port: bound };
}

/**
 * Serves `clip` (see liveClip) at rtsp://127.0.0.1:<port>/live, looping in real time. The port is one no
 * outgoing connection can take while the server is down (test/helpers/ports.ts), so restart() gets it back.
 */
export async function startRtspServer(clip: string): Promise<RtspSource> {
  let started: { child: ChildProcess; port: number } | undefined;
  for (let attempt = 1; !started; attempt++) {
    try {
      started = await spawnRtsp(clip, await stablePort());
    } catch (e) {
      // Another test that picked the same port in the moment between our check and the bind.
      if (attempt >= 3 || !/could not listen/.test(String(e))) throw e;
    }
  }
  let { child, port } = started;
  let current: ChildProcess | null = child;
  return {
    url: `rtsp://127.0.0.1:${port}/live`,
    stall: () => current?.stdin!.write('stall\n'),
    resume: () => current?.stdin!.write('resume\n'),
    kill: async () => {
      await stop(current);
      current = null;
    },
    restart: async () => {
      await stop(current);
      // Below the ephemeral range: only a test asking for this very number could have taken it.
      ({ child } = await spawnRtsp(clip, port));
      current = child;
    },
    close: async () => {
      await stop(current);
      current = null;
    },
  };
}

export interface HttpLiveSource {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/**
 * A live HLS playlist: FFmpeg copies `clip` in real time (-re, looping) into 1 s segments, keeps 4 in the
 * playlist and deletes older ones; a plain HTTP server serves the folder. Resolves once the playlist lists
 * segments.
 */
export async function startLiveHls(clip: string): Promise<HttpLiveSource> {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-hls-'));
  const ffmpeg = track(
    spawn(
      'ffmpeg',
      [
        '-nostdin',
        '-v',
        'error',
        '-re',
        '-stream_loop',
        '-1',
        '-i',
        clip,
        '-c',
        'copy',
        '-f',
        'hls',
        '-hls_time',
        '1',
        '-hls_list_size',
        '4',
        '-hls_flags',
        'delete_segments',
        join(dir, 'live.m3u8'),
      ],
      { stdio: 'ignore' },
    ),
  );
  const server = createServer((req, res) => {
    const name = basename(new URL(req.url ?? '/', 'http://x').pathname);
    const path = join(dir, name);
    if (!/^[\w.-]+$/.test(name) || !existsSync(path)) {
      res.writeHead(404);
      res.end();
      return;
    }
    const type = name.endsWith('.m3u8') ? 'application/vnd.apple.mpegurl' : 'video/mp2t';
    if (name.endsWith('.m3u8')) {
      res.writeHead(200, { 'Content-Type': type });
      res.end(readFileSync(path));
      return;
    }
    res.writeHead(200, { 'Content-Type': type });
    createReadStream(path)
      .on('error', () => res.destroy())
      .pipe(res);
  });
  const port = await listen(server);
  const playlist = join(dir, 'live.m3u8');
  const until = Date.now() + 30_000;
  while (!(existsSync(playlist) && readFileSync(playlist, 'utf8').split('.ts').length > 2)) {
    if (Date.now() > until || ffmpeg.exitCode !== null) throw new Error('the live HLS playlist did not appear');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${port}/live.m3u8`,
    close: async () => {
      await stop(ffmpeg);
      await closeServer(server);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An endless MPEG-TS response (no length): each request gets `clip` looping in real time from FFmpeg. */
export async function startTsStream(clip: string): Promise<HttpLiveSource> {
  const server = createServer((req, res) => {
    const ffmpeg = track(
      spawn(
        'ffmpeg',
        ['-nostdin', '-v', 'error', '-re', '-stream_loop', '-1', '-i', clip, '-c', 'copy', '-f', 'mpegts', 'pipe:1'],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      ),
    );
    res.writeHead(200, { 'Content-Type': 'video/mp2t' });
    ffmpeg.stdout!.pipe(res);
    res.on('close', () => ffmpeg.kill('SIGKILL'));
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/stream.ts`, close: () => closeServer(server) };
}
