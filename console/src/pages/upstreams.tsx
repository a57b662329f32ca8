import { useState } from 'preact/hooks';
import { api, type Me } from '../api.js';
import { DataTable, ErrorNote, JsonBlock, useAction, useApi } from '../components.js';

interface HeldDefinition {
  name: string;
  tool: string;
  pinned: unknown;
  current: unknown;
}
interface Upstream {
  service: string;
  kind: string;
  state: string;
  required: boolean;
  toolCount: number;
  lastError?: string;
  circuit?: string;
  detail?: { transport?: string; reconnectAttempts?: number; connectedAt?: string; held?: string[]; heldDefinitions?: HeldDefinition[] };
}

function Held({ entry, me, onAccepted }: { entry: HeldDefinition; me: Me; onAccepted: () => void }) {
  const action = useAction();
  const [done, setDone] = useState(false);
  const accept = () =>
    action.run(async () => {
      await api('POST', `/v1/admin/tools/${encodeURIComponent(entry.name)}/accept`);
      setDone(true);
      onAccepted();
    });
  return (
    <article class="card" aria-label={`Held definition of ${entry.name}`}>
      <h4>{entry.name} — definition changed upstream</h4>
      <div class="side-by-side">
        <section>
          <h5>Pinned (what tenants saw)</h5>
          <JsonBlock value={entry.pinned} label={`pinned definition of ${entry.name}`} />
        </section>
        <section>
          <h5>New (held back)</h5>
          <JsonBlock value={entry.current} label={`new definition of ${entry.name}`} />
        </section>
      </div>
      <button type="button" onClick={accept} disabled={done}>Accept</button>
      {!me.operator ? <p class="hint">Accepting changes what every tenant sees: only a global operator (auth.operators) may.</p> : null}
      <ErrorNote error={action.error} />
    </article>
  );
}

/** A global operator's reload of the configuration file (as SIGHUP does): what changed, what needs a restart. */
function Reload({ onReloaded }: { onReloaded: () => void }) {
  const action = useAction();
  const [outcome, setOutcome] = useState<{ changed: boolean; restartRequired: string[] } | null>(null);
  const reload = () =>
    action.run(async () => {
      setOutcome(null);
      setOutcome((await api<{ changed: boolean; restartRequired: string[] }>('POST', '/v1/admin/reload')).body);
      onReloaded();
    });
  return (
    <section class="scope" aria-label="Configuration">
      <button type="button" onClick={reload} disabled={action.busy}>Reload configuration</button>
      {outcome ? (
        <p role="status">
          Reloaded: {outcome.changed ? 'the configuration changed' : 'no change'}
          {outcome.restartRequired.length > 0 ? `; needs a restart to apply: ${outcome.restartRequired.join(', ')}` : ''}.
        </p>
      ) : null}
      <ErrorNote error={action.error} />
    </section>
  );
}

export function UpstreamsPage({ me }: { me: Me }) {
  const upstreams = useApi<{ upstreams: Upstream[] }>('/v1/admin/upstreams', 5000);
  const list = upstreams.data?.upstreams ?? [];
  return (
    <div>
      {me.operator ? <Reload onReloaded={upstreams.reload} /> : null}
      <ErrorNote error={upstreams.error} />
      {upstreams.data && list.length === 0 ? <p class="empty">Your tenant uses no upstream services.</p> : null}
      {list.length > 0 ? (
        <DataTable caption="Upstream services" headers={['Service', 'Kind', 'State', 'Transport', 'Tools', 'Reconnects', 'Circuit', 'Last error']} stacked>
          {list.map((upstream) => (
            <tr key={`${upstream.kind}-${upstream.service}`}>
              <td data-label="Service">{upstream.service}{upstream.required ? ' (required)' : ''}</td>
              <td data-label="Kind">{upstream.kind}</td>
              <td data-label="State"><span class={`badge ${upstream.state}`}>{upstream.state}</span></td>
              <td data-label="Transport">{upstream.detail?.transport ?? '—'}</td>
              {/* Users' own servers: their tools are each user's, never one count for the tenant. */}
              <td data-label="Tools">{upstream.kind === 'user-mcp' ? 'per user' : upstream.toolCount}</td>
              <td data-label="Reconnects">{upstream.detail?.reconnectAttempts ?? 0}</td>
              <td data-label="Circuit">{upstream.circuit ?? 'closed'}</td>
              <td data-label="Last error" class="wrap">{upstream.lastError ?? ''}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      <h2>Held by definition pinning</h2>
      {list.every((upstream) => (upstream.detail?.heldDefinitions ?? []).length === 0) ? <p class="empty">No changed tool definition is held.</p> : null}
      {list.flatMap((upstream) => (upstream.detail?.heldDefinitions ?? []).map((entry) => <Held key={entry.name} entry={entry} me={me} onAccepted={upstreams.reload} />))}
    </div>
  );
}
