import { DataTable, ErrorNote, useApi } from '../components.js';
import { time } from '../format.js';

// A call's guardrail findings as its audit line records them (docs/governance.md#guardrails): kinds,
// actions and counts, never the matched text.
interface GuardrailEvent {
  direction: 'arguments' | 'result';
  detector: string;
  action: string;
  count: number;
  score?: number;
}

interface CallEvent {
  event: string;
  time: number;
  requestId: string;
  callId?: string | null;
  user: string;
  tool?: string | null;
  outcome: string;
  guardrails?: GuardrailEvent[];
}

/** How many recent audit events the page looks through for guardrail findings (the API's largest page). */
const LOOK_BACK = 1000;

const findingText = (g: GuardrailEvent): string => `${g.direction === 'arguments' ? 'args' : 'result'}: ${g.detector} ×${g.count} → ${g.action}${g.score !== undefined ? ` (score ${g.score})` : ''}`;

/** The tenant's recent calls with guardrail findings, newest first, from the recent audit events. */
export function GuardrailsPage({ tenant }: { tenant?: string }) {
  const params = new URLSearchParams({ limit: String(LOOK_BACK) });
  if (tenant !== undefined) params.set('tenant', tenant);
  const loaded = useApi<{ events: CallEvent[] }>(`/v1/admin/audit?${params.toString()}`, 10_000);
  const events = (loaded.data?.events ?? []).filter((event) => event.event === 'call' && (event.guardrails?.length ?? 0) > 0);
  return (
    <div>
      <p class="hint">Calls among the last {LOOK_BACK} audit events where a guardrail found something: what kind, on which side, and what was done. The matched text is never recorded.</p>
      <ErrorNote error={loaded.error} />
      {loaded.data && events.length === 0 ? <p class="empty">No guardrail findings in the recent events.</p> : null}
      {events.length > 0 ? (
        <DataTable caption="Recent guardrail findings" headers={['Time', 'Tool', 'User', 'Outcome', 'Findings', 'Call id']} stacked>
          {events.map((event) => (
            <tr key={`${event.requestId}-${event.callId ?? ''}-${event.time}`}>
              <td data-label="Time"><time dateTime={new Date(event.time).toISOString()}>{time(event.time)}</time></td>
              <td data-label="Tool" class="name">{event.tool ?? ''}</td>
              <td data-label="User">{event.user}</td>
              <td data-label="Outcome"><span class={`badge ${event.outcome === 'ok' ? 'ok' : 'denied'}`}>{event.outcome}</span></td>
              <td data-label="Findings">{(event.guardrails ?? []).map((g) => <div key={`${g.direction}-${g.detector}-${g.action}`}>{findingText(g)}</div>)}</td>
              <td data-label="Call id" class="wrap">{event.callId ?? ''}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </div>
  );
}
