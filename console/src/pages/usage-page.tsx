// Usage per project and UTC day (admin API): requests, tokens, video frames and processing time, as a chart
// and a table.
import { useState } from 'preact/hooks';
import { useSession } from '../session-context';
import { useLoad } from '../use-load';
import { fmtMs, fmtNumber, utcDay } from '../format';
import { ErrorNotice, Loading } from '../components/notice';
import { METRICS, UsageChart, daysBetween, type UsageMetric } from '../components/usage-chart';
import { useAdminErrors } from './use-admin-errors';

const DAY = 86_400_000;

export function UsagePage(props: { projectId: string }) {
  const { api } = useSession();
  const [range, setRange] = useState(() => ({ from: utcDay(new Date(Date.now() - 29 * DAY)), to: utcDay(new Date()) }));
  const [metric, setMetric] = useState<UsageMetric>('requests');
  // `to` is exclusive on the server: ask for the day after the last one shown.
  const usage = useLoad(
    () =>
      api.usage(
        props.projectId,
        `${range.from}T00:00:00Z`,
        new Date(Date.parse(`${range.to}T00:00:00Z`) + DAY).toISOString(),
      ),
    [api, props.projectId, range.from, range.to],
  );
  useAdminErrors(usage.error);
  const rows = usage.data?.data.filter((d) => d.day.slice(0, 10) >= range.from && d.day.slice(0, 10) <= range.to) ?? [];
  const total = rows.reduce(
    (t, d) => ({
      requests: t.requests + d.requests,
      input_tokens: t.input_tokens + d.input_tokens,
      output_tokens: t.output_tokens + d.output_tokens,
      frames: t.frames + d.frames,
      ms: t.ms + d.ms,
    }),
    { requests: 0, input_tokens: 0, output_tokens: 0, frames: 0, ms: 0 },
  );

  return (
    <>
      <h2>Usage</h2>
      <form
        class="panel row"
        onSubmit={(e) => {
          e.preventDefault();
          usage.reload();
        }}
      >
        <label for="usage-from">From</label>
        <input
          id="usage-from"
          type="date"
          value={range.from}
          max={range.to}
          onChange={(e) => setRange({ ...range, from: (e.target as HTMLInputElement).value || range.from })}
        />
        <label for="usage-to">To</label>
        <input
          id="usage-to"
          type="date"
          value={range.to}
          min={range.from}
          onChange={(e) => setRange({ ...range, to: (e.target as HTMLInputElement).value || range.to })}
        />
        <label for="usage-metric">Chart</label>
        <select
          id="usage-metric"
          value={metric}
          onChange={(e) => setMetric((e.target as HTMLSelectElement).value as UsageMetric)}
        >
          {METRICS.map((m) => (
            <option key={m.id} value={m.id}>
              {m.label}
            </option>
          ))}
        </select>
        <button type="submit">Refresh</button>
      </form>
      {usage.loading && !usage.data && <Loading what="usage" />}
      {usage.error != null && <ErrorNotice error={usage.error} what="usage" />}
      {usage.data && (
        <>
          <figure class="chart-box">
            <UsageChart days={daysBetween(range.from, range.to)} data={rows} metric={metric} />
            <figcaption>{METRICS.find((m) => m.id === metric)!.label} per UTC day</figcaption>
          </figure>
          <table class="data numeric" aria-label="Usage per day">
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Requests</th>
                <th scope="col">Input tokens</th>
                <th scope="col">Output tokens</th>
                <th scope="col">Frames</th>
                <th scope="col">Processing time</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colSpan={6}>No usage in this period.</td>
                </tr>
              )}
              {[...rows].reverse().map((d) => (
                <tr key={d.day}>
                  <th scope="row">{d.day.slice(0, 10)}</th>
                  <td>{fmtNumber(d.requests)}</td>
                  <td>{fmtNumber(d.input_tokens)}</td>
                  <td>{fmtNumber(d.output_tokens)}</td>
                  <td>{fmtNumber(d.frames)}</td>
                  <td>{fmtMs(d.ms)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr class="total">
                <th scope="row">Total</th>
                <td data-total="requests">{fmtNumber(total.requests)}</td>
                <td>{fmtNumber(total.input_tokens)}</td>
                <td>{fmtNumber(total.output_tokens)}</td>
                <td>{fmtNumber(total.frames)}</td>
                <td>{fmtMs(total.ms)}</td>
              </tr>
            </tfoot>
          </table>
        </>
      )}
    </>
  );
}
