import { LineChart } from '../chart.js';
import { DataTable, ErrorNote, useApi } from '../components.js';

interface Stats {
  minutes: string[];
  total: { calls: number[]; errors: number[] };
  tools: Array<{ tool: string; calls: number[]; errors: number[]; p95Ms: Array<number | null> }>;
}

const TOP = 6;

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
      <p class="hint">Last 60 minutes on this replica, {tenant === undefined ? 'your tenant' : <>tenant <strong>{tenant}</strong></>}: {sum(data.total.calls)} calls, {sum(data.total.errors)} errors.</p>
      <div class="charts">
        <LineChart title="Calls per minute" unit="calls" minutes={data.minutes} series={[{ label: 'all tools', values: data.total.calls }, ...busiest.map((t) => ({ label: t.tool, values: t.calls }))]} />
        <LineChart title="Error rate (%)" unit="%" minutes={data.minutes} series={[{ label: 'all tools', values: errorRate }]} />
        <LineChart title="p95 latency per tool (ms)" unit="ms" minutes={data.minutes} series={busiest.map((t) => ({ label: t.tool, values: t.p95Ms }))} />
      </div>
      {data.tools.length > 0 ? (
        <DataTable caption="Per tool, last hour" headers={['Tool', 'Calls', 'Errors', 'Worst p95 (ms)']}>
          {data.tools.map((t) => (
            <tr key={t.tool}><td>{t.tool}</td><td>{sum(t.calls)}</td><td>{sum(t.errors)}</td><td>{Math.max(0, ...t.p95Ms.filter((v): v is number => v !== null)) || '—'}</td></tr>
          ))}
        </DataTable>
      ) : <p class="empty">No calls in the last hour.</p>}
    </div>
  );
}
