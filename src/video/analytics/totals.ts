// Running totals per rule id: counts by direction and class, time buckets, occupancy peaks, dwell and speed
// statistics. They outlive the rule: a rule removed by a change keeps its totals (active: false), and a
// rule put back under the same id goes on counting into them.

/** Buckets kept per rule: a day of minutes; older buckets are dropped first on a long live source. */
export const MAX_BUCKETS = 1440;
/** Samples kept per statistic; past it every other one is dropped (deterministic, so a recount agrees). */
const MAX_SAMPLES = 50_000;

export interface Stats {
  count: number;
  p50: number | null;
  p95: number | null;
  max: number | null;
  mean: number | null;
}

class Samples {
  #v: number[] = [];
  #count = 0;
  #sum = 0;
  #max = -Infinity;
  add(x: number): void {
    this.#count++;
    this.#sum += x;
    if (x > this.#max) this.#max = x;
    this.#v.push(x);
    if (this.#v.length > MAX_SAMPLES) this.#v = this.#v.filter((_, i) => i % 2 === 0);
  }
  stats(digits: number): Stats {
    if (this.#count === 0) return { count: 0, p50: null, p95: null, max: null, mean: null };
    const s = [...this.#v].sort((a, b) => a - b);
    // Nearest-rank percentiles.
    const pct = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
    const r = (x: number) => Number(x.toFixed(digits));
    return {
      count: this.#count,
      p50: r(pct(50)),
      p95: r(pct(95)),
      max: r(this.#max),
      mean: r(this.#sum / this.#count),
    };
  }
}

class Buckets<B extends { start_ms: number }> {
  readonly #m = new Map<number, B>();
  constructor(private readonly make: (start: number) => B) {}
  at(tMs: number, intervalMs: number): B {
    const start = Math.floor(tMs / intervalMs) * intervalMs;
    let b = this.#m.get(start);
    if (!b) {
      this.#m.set(start, (b = this.make(start)));
      if (this.#m.size > MAX_BUCKETS) this.#m.delete(Math.min(...this.#m.keys()));
    }
    return b;
  }
  list(): B[] {
    return [...this.#m.values()].sort((a, b) => a.start_ms - b.start_ms).map((b) => ({ ...b }));
  }
}

export interface LineSummary {
  in: number;
  out: number;
  active: boolean;
  by_class: Record<string, { in: number; out: number }>;
  buckets: Array<{ start_ms: number; in: number; out: number }>;
  speed_kmh?: Stats;
}

export class LineTotals {
  in = 0;
  out = 0;
  active = true;
  readonly #byClass = new Map<string, { in: number; out: number }>();
  readonly #buckets = new Buckets((start_ms) => ({ start_ms, in: 0, out: 0 }));
  readonly #speed = new Samples();
  add(direction: 1 | -1, cls: string, tMs: number, intervalMs: number, speedKmh: number): void {
    let c = this.#byClass.get(cls);
    if (!c) this.#byClass.set(cls, (c = { in: 0, out: 0 }));
    const b = this.#buckets.at(tMs, intervalMs);
    if (direction === 1) {
      this.in++;
      c.in++;
      b.in++;
    } else {
      this.out++;
      c.out++;
      b.out++;
    }
    if (!Number.isNaN(speedKmh)) this.#speed.add(speedKmh);
  }
  summary(withSpeed: boolean): LineSummary {
    const s: LineSummary = {
      in: this.in,
      out: this.out,
      active: this.active,
      by_class: Object.fromEntries(
        [...this.#byClass].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, { ...v }]),
      ),
      buckets: this.#buckets.list(),
    };
    if (withSpeed) s.speed_kmh = this.#speed.stats(1);
    return s;
  }
}

export interface ZoneSummary {
  entered: number;
  exited: number;
  occupancy: number;
  max_occupancy: number;
  active: boolean;
  dwell_ms: Stats;
  by_class: Record<string, { entered: number; exited: number }>;
  buckets: Array<{ start_ms: number; entered: number; exited: number; max_occupancy: number }>;
}

export class ZoneTotals {
  entered = 0;
  exited = 0;
  occupancy = 0;
  maxOccupancy = 0;
  active = true;
  /** Crowding episode: when occupancy first went above max_occupancy, and whether zone.crowded was sent. */
  crowdSince: number | null = null;
  crowdSent = false;
  readonly #byClass = new Map<string, { entered: number; exited: number }>();
  readonly #buckets = new Buckets((start_ms) => ({ start_ms, entered: 0, exited: 0, max_occupancy: 0 }));
  readonly #dwell = new Samples();
  #cls(cls: string) {
    let c = this.#byClass.get(cls);
    if (!c) this.#byClass.set(cls, (c = { entered: 0, exited: 0 }));
    return c;
  }
  enter(cls: string, tMs: number, intervalMs: number): void {
    this.entered++;
    this.#cls(cls).entered++;
    const b = this.#buckets.at(tMs, intervalMs);
    b.entered++;
    this.occupancy++;
    if (this.occupancy > this.maxOccupancy) this.maxOccupancy = this.occupancy;
    if (this.occupancy > b.max_occupancy) b.max_occupancy = this.occupancy;
  }
  exit(cls: string, tMs: number, intervalMs: number, dwellMs: number): void {
    this.exited++;
    this.#cls(cls).exited++;
    this.#buckets.at(tMs, intervalMs).exited++;
    this.occupancy--;
    this.#dwell.add(dwellMs);
  }
  summary(): ZoneSummary {
    return {
      entered: this.entered,
      exited: this.exited,
      occupancy: this.occupancy,
      max_occupancy: this.maxOccupancy,
      active: this.active,
      dwell_ms: this.#dwell.stats(0),
      by_class: Object.fromEntries(
        [...this.#byClass].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, { ...v }]),
      ),
      buckets: this.#buckets.list(),
    };
  }
}

/** Tracks last in zone `from` that then entered zone `to`: transitions[from][to]. */
export class Transitions {
  readonly #m = new Map<string, Map<string, number>>();
  add(from: string, to: string): void {
    let row = this.#m.get(from);
    if (!row) this.#m.set(from, (row = new Map()));
    row.set(to, (row.get(to) ?? 0) + 1);
  }
  summary(): Record<string, Record<string, number>> {
    return Object.fromEntries(
      [...this.#m]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([from, row]) => [from, Object.fromEntries([...row].sort(([a], [b]) => a.localeCompare(b)))]),
    );
  }
}
