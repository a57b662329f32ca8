import { COLORS, LineChart } from '../chart.js';
import { DataTable, ErrorNote, useApi } from '../components.js';
import { count } from '../format.js';

interface Stats {
  minutes: string[];
  total: { calls: number[]; errors: number[] };
  tools: Array<{ tool: string; calls: number[]; errors: number[]; p95Ms: Array<number | null> }>;
}

const TOP = 6;
const ALL_TOOLS_COLOR = COLORS.length - 1;

/**
 * The p95s come from histogram buckets: each is the upper bound of the bucket the 95th call fell in, so it
 * is shown as "≤ bound", never as a measured time.
 */
function worstP95(values: Array<number | null>): string {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? '—' : `≤ ${Math.max(...known)}`;
}

/** `tenant`: the tenant a global operator chose (its own when undefined). */
export function OverviewPage({ tenant }: { tenant?: string }) {
  const stats = useApi<Stats>(tenant === undefined ? '/v1/admin/stats' : `/v1/admin/stats?tenant=${encodeURIComponent(tenant)}`, 10_000);
  const data = stats.data;
  if (!data) return <ErrorNote error={stats.error} />;
  const busiest = [...data.tools].sort((a, b) => b.calls.reduce((s, n) => s + n, 0) - a.calls.reduce((s, n) => s + n, 0)).slice(0, TOP);
  const errorRate = data.total.calls.map((calls, i) => (calls === 0 ? null : Math.round(((data.total.errors[i] ?? 0) / calls) * 1000) / 10));
  const sum = (values: number[]) => values.reduce((s, n) => s + n, 0);
  return (
    <div>
      <ErrorNote error={stats.error} />
      <p class="hint">Last 60 minutes on this replica, {tenant === undefined ? 'your tenant' : <>tenant <strong>{tenant}</strong></>}: {count(sum(data.total.calls), 'call')}, {count(sum(data.total.errors), 'error')}. The same calls as Audit's call and decision lines of this hour: every call that ended, refused ones included; an error is any outcome but ok (a red badge there). A call waiting for approval counts once it is decided.</p>
      <div class="charts">
        {/* One colour per tool in every chart (its rank among the busiest); the total is the neutral colour. */}
        <LineChart title="Calls per minute" unit="calls" minutes={data.minutes} series={[{ label: 'all tools', values: data.total.calls, color: ALL_TOOLS_COLOR }, ...busiest.map((t, i) => ({ label: t.tool, values: t.calls, color: i }))]} />
        <LineChart title="Error rate (%)" unit="%" minutes={data.minutes} series={[{ label: 'all tools', values: errorRate, color: ALL_TOOLS_COLOR }]} />
        <LineChart title="p95 latency per tool (ms, bucket bound)" unit="ms" minutes={data.minutes} series={busiest.map((t, i) => ({ label: t.tool, values: t.p95Ms, color: i }))} />
      </div>
      {data.tools.length > 0 ? (
        <DataTable caption="Per tool, last hour" headers={['Tool', 'Calls', 'Errors', 'Worst p95 (ms, at most)']}>
          {data.tools.map((t) => (
            <tr key={t.tool}><td>{t.tool}</td><td>{sum(t.calls)}</td><td>{sum(t.errors)}</td><td class="num">{worstP95(t.p95Ms)}</td></tr>
          ))}
        </DataTable>
      ) : <p class="empty">No calls in the last hour.</p>}
    </div>
  );
}
