// Names for the JavaScript frames of a Linux perf profile, from the map file V8 writes with
// --perf-basic-prof(-only-functions) (/tmp/perf-<pid>.map: "start size name" per compiled function, in hex,
// appended as code is made). V8 frees code and compiles new functions into the same addresses, so one address
// can be in several entries; perf names a sample by the first, which in a server that has run a while is often
// a function of its start (the embedded database's glue code, compiled while it opened) long since gone. The
// newest entry that covers an address is the code that was there once the process had warmed up, which is
// when a profile samples it.
import { readFileSync } from 'node:fs';

export interface PerfMap {
  /** The newest entry's name for an address, or undefined outside every entry (native code). */
  name(address: number): string | undefined;
  /** Entries in the file. */
  readonly size: number;
}

/** Reads a perf map file (a missing file is an empty map). */
export function readPerfMap(file: string): PerfMap {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {}
  return parsePerfMap(text);
}

export function parsePerfMap(text: string): PerfMap {
  const starts: number[] = [];
  const ends: number[] = [];
  const names: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-fA-F]+) ([0-9a-fA-F]+) (.*)$/.exec(line);
    if (!m) continue;
    const start = Number.parseInt(m[1]!, 16);
    starts.push(start);
    ends.push(start + Number.parseInt(m[2]!, 16));
    names.push(m[3]!);
  }
  // Entries sorted by start, so a lookup looks only at those starting at or below the address; among those
  // that cover it the newest (the highest index in the file) wins.
  const order = starts.map((_, i) => i).sort((a, b) => starts[a]! - starts[b]! || a - b);
  const sortedStarts = order.map((i) => starts[i]!);
  // The largest end among the entries up to each position: the backward scan stops once nothing earlier can
  // reach the address.
  const reach: number[] = [];
  let most = -Infinity;
  for (const i of order) reach.push((most = Math.max(most, ends[i]!)));
  const cache = new Map<number, string | undefined>();
  return {
    size: names.length,
    name(address: number): string | undefined {
      if (cache.has(address)) return cache.get(address);
      // The last sorted position whose start is <= address.
      let lo = 0;
      let hi = sortedStarts.length - 1;
      let at = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (sortedStarts[mid]! <= address) {
          at = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      let best = -1;
      for (let p = at; p >= 0 && reach[p]! > address; p--) {
        const i = order[p]!;
        if (address < ends[i]! && i > best) best = i;
      }
      const found = best < 0 ? undefined : names[best];
      cache.set(address, found);
      return found;
    },
  };
}
