// Linux perf on one thread of a process while something runs: the samples' frames, named (JavaScript frames
// from V8's map by the newest code at their address, bench/perf-map.ts), innermost first, and each sample put
// in the first part a frame names. CPU time, not wall time: V8's own profiler also counts time in calls that
// wait or are preempted. The process must run with --perf-basic-prof-only-functions for JavaScript names.
// Needs `perf` (Debian's linux-perf) and perf_event_paranoid <= 2. Benches run by hand use it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { readPerfMap } from './perf-map.js';

/** Throws with `who` in the message when perf is missing. */
export function requirePerf(who: string): void {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(`${who}: needs perf (apt-get install linux-perf)`);
  }
}

/**
 * Samples thread `tid` (default: the main thread, whose id is the process's) of `pid` at 999 Hz while `during`
 * runs, and only then: sampling is switched on once perf is attached (its control descriptors: enable, then
 * its ack), so a perf that starts slowly on a loaded machine still samples the whole of `during`.
 */
export async function sampleThread<T>(
  pid: number,
  during: () => Promise<T>,
  tid = pid,
): Promise<{ result: T; samples: string[][] }> {
  const work = mkdtempSync(join(tmpdir(), 'sightflow-perf-'));
  const data = join(work, 'perf.data');
  try {
    const rec = spawn(
      'perf',
      ['record', '-F', '999', '-g', '-D', '-1', '--control', 'fd:3,4', '-t', String(tid), '-o', data],
      { stdio: ['ignore', 'ignore', 'inherit', 'pipe', 'pipe'] },
    );
    const recorded = new Promise<number | null>((r) => rec.on('close', r));
    const ctl = rec.stdio[3] as Writable;
    const ack = rec.stdio[4] as Readable;
    const command = (c: string) =>
      new Promise<void>((resolve, reject) => {
        const failed = () => reject(new Error(`perf did not acknowledge ${c}`));
        rec.once('close', failed);
        ack.once('data', () => {
          rec.off('close', failed);
          resolve();
        });
        ctl.write(`${c}\n`);
      });
    await command('enable');
    const result = await during();
    await command('disable');
    rec.kill('SIGINT');
    const code = await recorded;
    if (code !== 0 && code !== null) throw new Error(`perf record exited with ${code}`);
    const scripted = spawnSync('perf', ['script', '-i', data, '-F', 'tid,ip,sym'], { maxBuffer: 256 * 1024 * 1024 });
    const script = scripted.stdout?.toString() ?? '';
    // perf script: a line with the thread id alone opens a sample (perf 6.1 pads it with spaces), its frames
    // follow indented, each an address and a symbol, innermost first.
    const jit = readPerfMap(`/tmp/perf-${pid}.map`);
    const frameName = (line: string) => {
      const m = /^([0-9a-f]+) (.*)$/.exec(line);
      return m ? (jit.name(Number.parseInt(m[1]!, 16)) ?? m[2]!) : line;
    };
    const samples: string[][] = [];
    let frames: string[] | null = null;
    for (const line of script.split('\n')) {
      if (line === '') continue;
      if (/^\s*\d+\s*$/.test(line)) {
        if (frames) samples.push(frames);
        frames = [];
      } else frames?.push(frameName(line.trim()));
    }
    if (frames) samples.push(frames);
    if (samples.length === 0)
      throw new Error(
        `perf recorded no samples (perf.data ${statSync(data).size} bytes; perf script: ${String(scripted.stderr).trim().slice(0, 600)})`,
      );
    return { result, samples };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface Part {
  part: string;
  share: number;
  /** The part's share of `msPerUnit`. */
  ms: number;
}

/** Each sample in the first part any of its frames (innermost first) names; else `rest`. Largest first. */
export function attribute(
  samples: string[][],
  parts: Array<[string, RegExp]>,
  rest: string,
  msPerUnit: number,
): Part[] {
  const counts = new Map<string, number>();
  for (const frames of samples) {
    let part = rest;
    outer: for (const f of frames)
      for (const [name, re] of parts)
        if (re.test(f)) {
          part = name;
          break outer;
        }
    counts.set(part, (counts.get(part) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([part, n]) => ({
      part,
      share: +(n / samples.length).toFixed(3),
      ms: +((n / samples.length) * msPerUnit).toFixed(2),
    }));
}
