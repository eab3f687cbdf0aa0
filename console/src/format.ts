// Display formats: the console shows times in the browser's locale, numbers grouped, durations readable.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const number = new Intl.NumberFormat();

export function fmtDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

export function fmtNumber(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : number.format(n);
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** A time in a video: m:ss.s, or h:mm:ss past an hour (a moment of a long recording). */
export function fmtClock(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}:${String(m).padStart(2, '0')}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
  return `${m}:${(Math.floor((s % 60) * 10) / 10).toFixed(1).padStart(4, '0')}`;
}

export function fmtScore(s: number): string {
  return s.toFixed(3);
}

/** UTC day (YYYY-MM-DD) of a date: usage is totalled per UTC day. */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}
