import { useRef, useState } from 'preact/hooks';
import { api, ApiError, type ApiBody } from '../api.js';
import { DataTable, ErrorNote, useAction, useApi } from '../components.js';
import { pretty, time } from '../format.js';

type Tenant = ApiBody<'getTenant'>;
type TenantList = ApiBody<'listTenants'>;
const PAGE = 50;

/** The configuration text of the editor as an object, or the reason it is not one. */
function parsed(text: string): { ok: true; config: Record<string, unknown> } | { ok: false; reason: string } {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? { ok: true, config: value as Record<string, unknown> } : { ok: false, reason: 'The configuration must be a JSON object.' };
  } catch (failure) {
    return { ok: false, reason: `Not JSON: ${(failure as Error).message}` };
  }
}

/** The configuration a new tenant starts from, in each format of the form. */
const STARTER = { json: '{\n  "tools": { "allow": ["*"], "deny": [] }\n}', yaml: 'tools:\n  allow: ["*"]\n  deny: []\n' } as const;

function sentAsJson(text: string): { ok: true; sent: { body: Record<string, unknown> } } | { ok: false; reason: string } {
  const body = parsed(text);
  return body.ok ? { ok: true, sent: { body: body.config } } : body;
}

/**
 * Tenants as data, for global operators (the tenant API, docs/api.md#tenants): list and search, create (from JSON
 * or YAML), edit (sent with the ETag read, so a change made meanwhile is refused, not overwritten), delete. Tenants of the
 * configuration file are shown read-only. Who changed a tenant last is on it; every change is in the audit log.
 */
export function TenantsPage() {
  const [q, setQ] = useState('');
  const [match, setMatch] = useState<'prefix' | 'substring'>('prefix');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = new URLSearchParams({ limit: String(PAGE), match, ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) });
  const list = useApi<TenantList>(`/v1/admin/tenants?${query.toString()}`);
  const [open, setOpen] = useState<{ tenant: Tenant; etag: string | null; text: string } | null>(null);
  // The tenant whose answer the editor waits for. The editor is hidden meanwhile: an answer arriving after the
  // operator had started typing once replaced the text typed, and a Save then stored the old configuration as
  // a new revision (issue 46). A late answer to an earlier Open is dropped.
  const [loading, setLoading] = useState<string | null>(null);
  const latestOpen = useRef(0);
  const [newId, setNewId] = useState('');
  const [newFormat, setNewFormat] = useState<'json' | 'yaml'>('json');
  const [newText, setNewText] = useState<string>(STARTER.json);
  const action = useAction();

  const show = (id: string) => {
    const asked = ++latestOpen.current;
    setOpen(null);
    setLoading(id);
    void action.run(async () => {
      try {
        const answer = await api<Tenant>('GET', `/v1/admin/tenants/${encodeURIComponent(id)}`);
        if (asked === latestOpen.current) setOpen({ tenant: answer.body, etag: answer.etag, text: pretty(answer.body.config) });
      } finally {
        if (asked === latestOpen.current) setLoading(null);
      }
    });
  };
  const create = (event: Event) => {
    event.preventDefault();
    // YAML goes as typed: the server parses it as it parses the configuration file, and names what is wrong.
    const body = newFormat === 'yaml' ? ({ ok: true, sent: { yaml: newText } } as const) : sentAsJson(newText);
    if (!body.ok) return void action.run(async () => Promise.reject(new ApiError(400, 'NOT_JSON', body.reason)));
    void action.run(async () => {
      const answer = await api<Tenant>('PUT', `/v1/admin/tenants/${encodeURIComponent(newId.trim())}`, { ...body.sent, createOnly: true });
      latestOpen.current += 1;
      setLoading(null);
      setOpen({ tenant: answer.body, etag: answer.etag, text: pretty(answer.body.config) });
      setNewId('');
      list.reload();
    });
  };
  const save = () => {
    if (!open) return;
    const body = parsed(open.text);
    if (!body.ok) return void action.run(async () => Promise.reject(new ApiError(400, 'NOT_JSON', body.reason)));
    void action.run(async () => {
      const answer = await api<Tenant>('PUT', `/v1/admin/tenants/${encodeURIComponent(open.tenant.id)}`, { body: body.config, ifMatch: open.etag });
      setOpen({ tenant: answer.body, etag: answer.etag, text: pretty(answer.body.config) });
    });
  };
  const remove = () => {
    if (!open) return;
    void action.run(async () => {
      await api('DELETE', `/v1/admin/tenants/${encodeURIComponent(open.tenant.id)}`, { ifMatch: open.etag });
      setOpen(null);
      list.reload();
    });
  };
  const search = (value: string, how: 'prefix' | 'substring') => {
    setQ(value);
    setMatch(how);
    setCursors([]);
  };

  return (
    <div>
      <p class="hint">Tenants of the configuration file (read-only here) and of the state store. A change reaches every replica within a second; calls already running finish on the version they started with.</p>
      <form class="inline-form" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="tenant-q">Search</label>
          <input id="tenant-q" value={q} maxLength={128} onInput={(e) => search((e.target as HTMLInputElement).value, match)} />
        </div>
        <div class="field">
          <label for="tenant-match">Match</label>
          <select id="tenant-match" value={match} onChange={(e) => search(q, (e.target as HTMLSelectElement).value === 'substring' ? 'substring' : 'prefix')}>
            <option value="prefix">id starts with</option>
            <option value="substring">id contains</option>
          </select>
        </div>
      </form>
      <ErrorNote error={list.error} />
      {list.data && list.data.tenants.length === 0 ? <p class="empty">No tenant on this page.</p> : null}
      {(list.data?.tenants ?? []).length > 0 ? (
        <DataTable caption="Tenants" headers={['Id', '']}>
          {list.data!.tenants.map((id) => (
            <tr key={id}>
              <td>{id}</td>
              <td><button type="button" aria-label={`Open ${id}`} onClick={() => show(id)}>Open</button></td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      <div class="inline-form">
        {cursors.length > 0 ? <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</button> : null}
        {list.data?.next ? <button type="button" onClick={() => setCursors([...cursors, list.data!.next!])}>Next page</button> : null}
      </div>

      <ErrorNote error={action.error} />
      {loading !== null ? <p class="hint" role="status">Reading tenant {loading}…</p> : null}
      {open ? (
        <section class="card" aria-label={`Tenant ${open.tenant.id}`}>
          <h2>{open.tenant.id}</h2>
          <p class="hint">
            {open.tenant.source === 'file'
              ? 'From the configuration file: change it there.'
              : `Revision ${open.tenant.revision ?? '?'}, changed ${open.tenant.updatedAt ? time(open.tenant.updatedAt) : '—'} by ${open.tenant.updatedBy ?? '—'}.`}
          </p>
          <label for="tenant-config">Configuration (the keys of <code>tenants.&lt;id&gt;</code>, as JSON)</label>
          <textarea id="tenant-config" rows={14} spellcheck={false} readOnly={open.tenant.source === 'file' || action.busy} value={open.text} onInput={(e) => setOpen({ ...open, text: (e.target as HTMLTextAreaElement).value })} />
          {open.tenant.source === 'store' ? (
            <div class="inline-form">
              <button type="button" disabled={action.busy} onClick={save}>Save</button>
              <button type="button" class="danger" disabled={action.busy} onClick={remove}>Delete tenant</button>
            </div>
          ) : null}
        </section>
      ) : null}

      <h2>Create a tenant</h2>
      <form class="schema-form" onSubmit={create}>
        <div class="field">
          <label for="new-tenant-id">Id</label>
          <input id="new-tenant-id" required pattern="[A-Za-z0-9_\-][A-Za-z0-9._\-]{0,127}" value={newId} onInput={(e) => setNewId((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="new-tenant-format">Format</label>
          <select
            id="new-tenant-format"
            value={newFormat}
            onChange={(e) => {
              const format = (e.target as HTMLSelectElement).value === 'yaml' ? 'yaml' : 'json';
              // The starting text follows the format until the operator has typed something else.
              if (newText === STARTER[newFormat]) setNewText(STARTER[format]);
              setNewFormat(format);
            }}
          >
            <option value="json">JSON</option>
            <option value="yaml">YAML (as under tenants.&lt;id&gt; in the file)</option>
          </select>
        </div>
        <div class="field" style={{ flexBasis: '100%' }}>
          <label for="new-tenant-config">Configuration ({newFormat === 'yaml' ? 'YAML' : 'JSON'})</label>
          <textarea id="new-tenant-config" rows={8} spellcheck={false} value={newText} onInput={(e) => setNewText((e.target as HTMLTextAreaElement).value)} />
        </div>
        <button type="submit" disabled={action.busy}>Create</button>
      </form>
    </div>
  );
}
