// Daily usage as an inline SVG bar chart: no chart library, scales with its container, and readable by
// screen readers through the title of each bar (the table below carries the same numbers).
import type { UsageDay } from '../api/types';

export type UsageMetric = 'requests' | 'tokens' | 'frames' | 'ms';

export const METRICS: Array<{ id: UsageMetric; label: string; value(d: UsageDay): number; format(n: number): string }> =
  [
    { id: 'requests', label: 'Requests', value: (d) => d.requests, format: (n) => String(n) },
    {
      id: 'tokens',
      label: 'Tokens (in + out)',
      value: (d) => d.input_tokens + d.output_tokens,
      format: (n) => String(n),
    },
    { id: 'frames', label: 'Video frames', value: (d) => d.frames, format: (n) => String(n) },
    { id: 'ms', label: 'Processing time (s)', value: (d) => d.ms / 1000, format: (n) => n.toFixed(1) },
  ];

const W = 720;
const H = 220;
const PAD = { left: 48, right: 8, top: 12, bottom: 28 };

/** Every UTC day from `from` to `to` (inclusive), so days without usage show as empty bars. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end && out.length < 400; t += 86_400_000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

export function UsageChart(props: { days: string[]; data: UsageDay[]; metric: UsageMetric }) {
  const m = METRICS.find((x) => x.id === props.metric)!;
  const byDay = new Map(props.data.map((d) => [d.day.slice(0, 10), d]));
  const values = props.days.map((day) => {
    const d = byDay.get(day);
    return d ? m.value(d) : 0;
  });
  const max = Math.max(1, ...values);
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const step = innerW / Math.max(1, props.days.length);
  const barW = Math.max(2, step * 0.7);
  const labelEvery = Math.ceil(props.days.length / 8);
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-labelledby="usage-chart-title"
      preserveAspectRatio="xMidYMid meet"
    >
      <title id="usage-chart-title">{`${m.label} per day, ${props.days[0] ?? ''} to ${props.days[props.days.length - 1] ?? ''}; highest ${m.format(Math.max(...values, 0))}`}</title>
      <line x1={PAD.left} y1={PAD.top + innerH} x2={W - PAD.right} y2={PAD.top + innerH} class="axis" />
      <line x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={PAD.top + innerH} class="axis" />
      <text x={PAD.left - 6} y={PAD.top + 4} class="tick" text-anchor="end">
        {m.format(max)}
      </text>
      <text x={PAD.left - 6} y={PAD.top + innerH} class="tick" text-anchor="end">
        0
      </text>
      {values.map((v, i) => {
        const h = (v / max) * innerH;
        const x = PAD.left + i * step + (step - barW) / 2;
        return (
          <rect
            key={props.days[i]}
            x={x}
            y={PAD.top + innerH - h}
            width={barW}
            height={Math.max(h, v > 0 ? 1 : 0)}
            class="bar"
            data-day={props.days[i]}
            data-value={v}
          >
            <title>{`${props.days[i]}: ${m.format(v)}`}</title>
          </rect>
        );
      })}
      {props.days.map(
        (day, i) =>
          i % labelEvery === 0 && (
            <text key={day} x={PAD.left + i * step + step / 2} y={H - 8} class="tick" text-anchor="middle">
              {day.slice(5)}
            </text>
          ),
      )}
    </svg>
  );
}
