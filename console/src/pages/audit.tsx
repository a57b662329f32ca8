import { useState } from 'preact/hooks';
import { DataTable, ErrorNote, useApi } from '../components.js';
import { time } from '../format.js';

// A call line, an approval decision line, or a resource read / prompt get line, as the audit sink writes them.
interface AuditEvent {
  event: 'call' | 'approval' | 'resource_read' | 'prompt_get';
  time: number;
  requestId: string;
  callId?: string | null;
  user: string;
  tool?: string | null;
  /** resource_read and prompt_get: the namespaced URI or prompt name. */
  name?: string;
  outcome: string;
  decision?: string;
  durationMs: number;
  approvalId?: string | null;
}

const KIND: Partial<Record<AuditEvent['event'], string>> = { resource_read: 'read', prompt_get: 'prompt' };
const outcomeLabel = (event: AuditEvent): string =>
  event.event === 'approval' ? `${event.decision ?? 'decision'}: ${event.outcome}` : KIND[event.event] ? `${KIND[event.event]}: ${event.outcome}` : event.outcome;

const OUTCOMES = ['ok', 'pending_approval', 'cancelled', 'refused', 'UNKNOWN_TOOL', 'VALIDATION_ERROR', 'PERMISSION_DENIED', 'APPROVAL_DENIED', 'APPROVAL_EXPIRED', 'RATE_LIMITED', 'TIMEOUT', 'CIRCUIT_OPEN', 'DEPTH_EXCEEDED', 'UPSTREAM_ERROR', 'TOOL_EXCEPTION', 'UNKNOWN_RESOURCE', 'UNKNOWN_PROMPT', 'INTERNAL_ERROR'];

export function AuditPage() {
  const [user, setUser] = useState('');
  const [tool, setTool] = useState('');
  const [outcome, setOutcome] = useState('');
  const [query, setQuery] = useState('limit=200');
  const events = useApi<{ events: AuditEvent[] }>(`/v1/admin/audit?${query}`, 5000);
  const apply = (event: Event) => {
    event.preventDefault();
    const params = new URLSearchParams({ limit: '200' });
    if (user.trim()) params.set('user', user.trim());
    if (tool.trim()) params.set('tool', tool.trim());
    if (outcome) params.set('outcome', outcome);
    setQuery(params.toString());
  };
  return (
    <div>
      <p class="hint">Recent audit events of your tenant, newest first (a bounded copy; the configured audit sink is the system of record). Arguments appear only as their SHA-256.</p>
      <form class="inline-form" onSubmit={apply}>
        <div class="field">
          <label for="audit-user">User</label>
          <input id="audit-user" value={user} onInput={(e) => setUser((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="audit-tool">Tool</label>
          <input id="audit-tool" value={tool} onInput={(e) => setTool((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="audit-outcome">Outcome</label>
          <select id="audit-outcome" value={outcome} onChange={(e) => setOutcome((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {OUTCOMES.map((value) => <option key={value} value={value}>{value}</option>)}
          </select>
        </div>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={events.error} />
      {events.data && events.data.events.length === 0 ? <p class="empty">No events match.</p> : null}
      {(events.data?.events ?? []).length > 0 ? (
        <DataTable caption="Audit events" headers={['Time', 'User', 'Tool or resource', 'Outcome', 'ms', 'Call id', 'Approval']}>
          {events.data!.events.map((event) => (
            <tr key={`${event.requestId}-${event.callId}-${event.time}-${event.outcome}`}>
              <td>{time(event.time)}</td>
              <td>{event.user}</td>
              <td class="wrap">{event.tool ?? event.name ?? ''}</td>
              <td><span class={`badge ${event.outcome === 'ok' ? 'ok' : event.outcome === 'pending_approval' ? 'pending' : 'denied'}`}>{outcomeLabel(event)}</span></td>
              <td>{event.durationMs}</td>
              <td class="wrap">{event.callId ?? ''}</td>
              <td class="wrap">{event.approvalId ?? ''}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </div>
  );
}
