// CPU time of processes by pid from /proc (Linux), for benches that need to say where a round's CPU went:
// the server is this process (process.cpuUsage), but the broker or a subscriber it started are children
// whose time only the kernel's accounting shows. Elsewhere every reading is NaN.
import { existsSync, readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux on every architecture Node runs). */
const HZ = 100;

/** User plus system CPU time of `pid` so far, in ms (NaN when it cannot be read). */
export function cpuMs(pid: number | undefined): number {
  return statCpuMs(pid === undefined ? undefined : `/proc/${pid}/stat`);
}

/**
 * The same for one thread of `pid` (`tid`; the main thread's is the pid itself), from its schedstat run time
 * (nanoseconds) where the kernel keeps it, else from stat's 10 ms ticks.
 */
export function threadCpuMs(pid: number | undefined, tid = pid): number {
  if (pid === undefined) return NaN;
  const ns = schedNs(`/proc/${pid}/task/${tid}/schedstat`);
  return Number.isNaN(ns) ? statCpuMs(`/proc/${pid}/task/${tid}/stat`) : ns / 1e6;
}

/**
 * CPU time of `pid`'s live threads, in ms, summed from their schedstat run times: for a short window of a
 * process whose threads last (a front process), where stat's 10 ms ticks read 0 for a few requests' work. A
 * thread that exits inside the window takes its time out of the sum; without schedstat, cpuMs.
 */
export function liveThreadsCpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return NaN;
  }
  let ns = 0;
  for (const tid of tids) {
    const t = schedNs(`/proc/${pid}/task/${tid}/schedstat`);
    // A thread gone between the listing and the read adds nothing; a kernel without schedstat falls back.
    if (Number.isNaN(t)) {
      if (existsSync(`/proc/${pid}/task/${tid}`)) return cpuMs(pid);
      continue;
    }
    ns += t;
  }
  return ns / 1e6;
}

/** The first field of a schedstat file: the task's time on a CPU, in ns (NaN when it cannot be read). */
function schedNs(file: string): number {
  try {
    const v = Number(readFileSync(file, 'utf8').split(' ')[0]);
    return Number.isFinite(v) ? v : NaN;
  } catch {
    return NaN;
  }
}

function statCpuMs(file: string | undefined): number {
  if (file === undefined) return NaN;
  try {
    const stat = readFileSync(file, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after its last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / HZ;
  } catch {
    return NaN;
  }
}

/** This process's children whose command name is `comm` (e.g. 'mosquitto'). */
export function childPids(comm: string): number[] {
  let dirs: string[];
  try {
    dirs = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const d of dirs) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (name === comm && ppid === process.pid) out.push(Number(d));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}
