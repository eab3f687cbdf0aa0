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

export function fmtScore(s: number): string {
  return s.toFixed(3);
}

/** UTC day (YYYY-MM-DD) of a date: usage is totalled per UTC day. */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}
