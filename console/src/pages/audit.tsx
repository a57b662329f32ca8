import { useState } from 'preact/hooks';
import { DataTable, ErrorNote, FilterSelect, useApi } from '../components.js';
import { localInputToIso, milliseconds, time, timeZone } from '../format.js';

// An audit line as the sink writes it: a call, an approval decision, a resource read or prompt get, or one of
// the lines without a duration (a read of the audit itself, a security event, a task's status, a relay).
interface AuditEvent {
  event: 'call' | 'approval' | 'resource_read' | 'prompt_get' | 'audit_read' | 'security' | 'task' | 'relay';
  time: number;
  requestId: string;
  callId?: string | null;
  user: string;
  tool?: string | null;
  /** resource_read and prompt_get: the namespaced URI or prompt name. */
  name?: string;
  outcome: string;
  decision?: string;
  /** Not on the lines without a duration (audit_read, security, task, relay). */
  durationMs?: number;
  approvalId?: string | null;
  /** audit_read: `list` (the audit page, GET /v1/admin/audit) or `verify`, and the filters the reader sent. */
  via?: string;
  filter?: Record<string, string | number>;
}

// Filters as a reader wrote them; the page size says nothing about what was read.
const FILTER_NAMES: Record<string, string> = { user: 'user', tool: 'tool', outcome: 'outcome', since: 'from', until: 'to' };
function filterText(filter: Record<string, string | number> = {}): string {
  const parts = Object.entries(filter)
    .filter(([name]) => name !== 'limit')
    .map(([name, value]) => `${FILTER_NAMES[name] ?? name} ${name === 'since' || name === 'until' ? time(String(value)) : String(value)}`);
  return parts.length > 0 ? parts.join(', ') : 'no filter';
}

/** What the row is about: the tool, resource or prompt, or for a read of the audit, what was read. */
function subjectOf(event: AuditEvent) {
  if (event.event !== 'audit_read') return event.tool ?? event.name ?? '';
  if (event.via === 'verify') return <span class="subject-kind">audit verified</span>;
  return (
    <>
      <span class="subject-kind">audit read</span> {filterText(event.filter)}
    </>
  );
}

const KIND: Partial<Record<AuditEvent['event'], string>> = { resource_read: 'read', prompt_get: 'prompt', audit_read: 'audit read', security: 'security', task: 'task', relay: 'relay' };
const outcomeLabel = (event: AuditEvent): string =>
  event.event === 'approval' ? `${event.decision ?? 'decision'}: ${event.outcome}` : KIND[event.event] ? `${KIND[event.event]}: ${event.outcome}` : event.outcome;

// Lines whose outcome other than ok is a failure or refusal (red); a task's status or a relay's is neither.
const FAILS_UNLESS_OK = new Set<AuditEvent['event']>(['call', 'approval', 'resource_read', 'prompt_get', 'security']);
const tone = (event: AuditEvent): string =>
  event.outcome === 'ok' ? 'ok' : event.outcome === 'pending_approval' ? 'pending' : FAILS_UNLESS_OK.has(event.event) ? 'denied' : '';

const OUTCOMES = ['ok', 'pending_approval', 'cancelled', 'refused', 'UNKNOWN_TOOL', 'VALIDATION_ERROR', 'PERMISSION_DENIED', 'APPROVAL_DENIED', 'APPROVAL_EXPIRED', 'RATE_LIMITED', 'TIMEOUT', 'CIRCUIT_OPEN', 'DEPTH_EXCEEDED', 'UPSTREAM_ERROR', 'TOOL_EXCEPTION', 'UNKNOWN_RESOURCE', 'UNKNOWN_PROMPT', 'INTERNAL_ERROR'];
const PAGE_SIZE = 50;
const keyOf = (event: AuditEvent): string => `${event.requestId}-${event.callId ?? ''}-${event.time}-${event.event}-${event.outcome}`;

interface Filters {
  user: string;
  tool: string;
  outcome: string;
  from: string;
  to: string;
}
const NO_FILTERS: Filters = { user: '', tool: '', outcome: '', from: '', to: '' };

/**
 * One page of the tenant's recent events, newest first. "Older" asks for the events at or before the
 * oldest one shown (`until`), dropping those already shown at that same millisecond; only the newest page
 * refreshes itself. `tenant`: the tenant a global operator chose (its own when undefined).
 */
export function AuditPage({ tenant }: { tenant?: string }) {
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  // Paging: the `until` of each page shown before this one (for Newer), this page's, and what it repeats.
  const [older, setOlder] = useState<{ until: string; seen: string[] } | null>(null);
  const [history, setHistory] = useState<Array<{ until: string; seen: string[] } | null>>([]);
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (tenant !== undefined) params.set('tenant', tenant);
  if (filters.user.trim()) params.set('user', filters.user.trim());
  if (filters.tool.trim()) params.set('tool', filters.tool.trim());
  if (filters.outcome) params.set('outcome', filters.outcome);
  const since = localInputToIso(filters.from);
  if (since) params.set('since', since);
  const until = older?.until ?? localInputToIso(filters.to);
  if (until) params.set('until', until);
  const loaded = useApi<{ events: AuditEvent[] }>(`/v1/admin/audit?${params.toString()}`, older === null ? 5000 : undefined);
  const events = (loaded.data?.events ?? []).filter((event) => !older?.seen.includes(keyOf(event)));
  const set = (name: keyof Filters) => (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value });
  const apply = (event: Event) => {
    event.preventDefault();
    setFilters(draft);
    setOlder(null);
    setHistory([]);
  };
  const last = events.at(-1);
  const goOlder = () => {
    if (!last) return;
    setHistory([...history, older]);
    setOlder({ until: new Date(last.time).toISOString(), seen: events.filter((event) => event.time === last.time).map(keyOf) });
  };
  const goNewer = () => {
    setOlder(history.at(-1) ?? null);
    setHistory(history.slice(0, -1));
  };
  const full = (loaded.data?.events.length ?? 0) >= PAGE_SIZE;
  return (
    <div>
      <p class="hint">
        Recent audit events{tenant !== undefined ? <> of tenant <strong>{tenant}</strong></> : ' of your tenant'}, newest first (a bounded copy; the configured audit sink is the system of record). Arguments
        appear only as their SHA-256. Times are in your time zone, <strong>{timeZone()}</strong>. Red: a call that failed or was
        refused (Overview counts these as errors), a decision not taken, a failed read, a security event; amber: waiting for approval.
      </p>
      <form class="filters" onSubmit={apply} aria-label="Audit filters">
        <div class="field">
          <label for="audit-user">User</label>
          <input id="audit-user" value={draft.user} onInput={set('user')} />
        </div>
        <div class="field">
          <label for="audit-tool">Tool</label>
          <input id="audit-tool" value={draft.tool} onInput={set('tool')} />
        </div>
        <FilterSelect id="audit-outcome" label="Outcome" value={draft.outcome} options={OUTCOMES} onChange={(outcome) => setDraft({ ...draft, outcome })} />
        <div class="field">
          <label for="audit-from">From</label>
          <input id="audit-from" type="datetime-local" step="1" value={draft.from} onInput={set('from')} />
        </div>
        <div class="field">
          <label for="audit-to">To</label>
          <input id="audit-to" type="datetime-local" step="1" value={draft.to} onInput={set('to')} />
        </div>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={loaded.error} />
      {loaded.data && events.length === 0 ? <p class="empty">{older ? 'No older events.' : 'No events match.'}</p> : null}
      {events.length > 0 ? (
        <DataTable caption={older ? `Audit events at or before ${time(older.until)}` : 'Audit events'} headers={['Time', 'Outcome', 'User', 'Tool or resource', 'ms', 'Call id', 'Approval']} stacked>
          {events.map((event) => (
            <tr key={keyOf(event)}>
              <td data-label="Time"><time dateTime={new Date(event.time).toISOString()}>{time(event.time)}</time></td>
              <td data-label="Outcome"><span class={`badge ${tone(event)}`}>{outcomeLabel(event)}</span></td>
              <td data-label="User">{event.user}</td>
              <td data-label="Tool" class="name">{subjectOf(event)}</td>
              <td data-label="ms" class="num">{typeof event.durationMs === 'number' ? milliseconds(event.durationMs) : ''}</td>
              <td data-label="Call id" class="wrap">{event.callId ?? ''}</td>
              <td data-label="Approval" class="wrap">{event.approvalId ?? ''}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      <div class="pager" role="group" aria-label="Audit pages">
        <button type="button" class="secondary" onClick={goNewer} disabled={older === null}>Newer</button>
        <button type="button" class="secondary" onClick={() => { setOlder(null); setHistory([]); }} disabled={older === null}>Newest</button>
        <button type="button" class="secondary" onClick={goOlder} disabled={!full || !last}>Older</button>
      </div>
    </div>
  );
}
