import { useState } from 'preact/hooks';
import { api, isAdmin, type ApiBody, type JsonSchema, type Me, type ToolEntry, type ToolResult } from '../api.js';
import { DataTable, ErrorNote, FilterSelect, JsonBlock, ResultView, useAction, useApi } from '../components.js';
import { SchemaForm } from '../schema-form.js';

type Insight = ApiBody<'listHeldBackTools'>;
type CedarExplanation = ApiBody<'explainCedarListing'>;

/** For a principal the admin chooses, which of the tenant's Cedar policies list or hold back each tool (read-only). */
function CedarExplain() {
  const [user, setUser] = useState('');
  const [roles, setRoles] = useState('');
  const [claims, setClaims] = useState('');
  const [path, setPath] = useState<string | null>(null);
  const answer = useApi<CedarExplanation>(path);
  const ask = (event: Event) => {
    event.preventDefault();
    const query = new URLSearchParams({ ...(user ? { user } : {}), ...(roles ? { roles } : {}), ...(claims ? { claims } : {}) });
    setPath(`/v1/admin/tools/cedar?${query.toString()}`);
  };
  return (
    <section aria-labelledby="cedar-heading">
      <h2 id="cedar-heading">Cedar policies for a principal</h2>
      <form class="filters" onSubmit={ask} aria-label="Explain Cedar decisions">
        <div class="field"><label for="cedar-user">User</label><input id="cedar-user" value={user} onInput={(e) => setUser((e.target as HTMLInputElement).value)} /></div>
        <div class="field"><label for="cedar-roles">Roles (comma-separated)</label><input id="cedar-roles" value={roles} onInput={(e) => setRoles((e.target as HTMLInputElement).value)} /></div>
        <div class="field"><label for="cedar-claims">Claims (JSON)</label><input id="cedar-claims" value={claims} onInput={(e) => setClaims((e.target as HTMLInputElement).value)} /></div>
        <button type="submit">Explain</button>
      </form>
      <ErrorNote error={answer.error} />
      {answer.data && !answer.data.cedar ? <p class="empty">Your tenant has no Cedar policies.</p> : null}
      {answer.data?.cedar ? (
        <DataTable caption="Listing decision per tool and the policies that determine it" headers={['Tool', 'Listed', 'Policies']}>
          {answer.data.tools.map((entry) => (
            <tr key={entry.name}><td>{entry.name}</td><td>{entry.listed ? 'yes' : 'no'}</td><td>{entry.policies.join(', ') || (entry.listed ? '' : 'no permit applies')}{entry.error ? ` (error: ${entry.error})` : ''}</td></tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}

function TryTool({ tool }: { tool: ToolEntry }) {
  const [schema, setSchema] = useState<JsonSchema | null>(tool.inputSchema ?? null);
  const [result, setResult] = useState<ToolResult | null>(null);
  const action = useAction();
  // A deferred tool is listed without its schema, as the model sees it; tool search has the full one.
  const loadSchema = () =>
    action.run(async () => {
      const found = (await api<{ tools: ToolEntry[] }>('GET', `/v1/tools/search?q=${encodeURIComponent(tool.name)}&limit=20`)).body.tools.find((t) => t.name === tool.name);
      setSchema(found?.inputSchema ?? { type: 'object' });
    });
  const run = (args: Record<string, unknown>) =>
    action.run(async () => {
      setResult((await api<ToolResult>('POST', '/v1/execute', { body: { name: tool.name, arguments: args } })).body);
    });
  return (
    <section class="try" aria-label={`Try ${tool.name}`}>
      <h4>Try it</h4>
      {schema ? <SchemaForm schema={schema} idPrefix={`try-${tool.name}`} busy={action.busy} onSubmit={run} /> : <button type="button" onClick={loadSchema}>Load schema</button>}
      <ErrorNote error={action.error} />
      {result ? <ResultView result={result} /> : null}
      {result?.status === 'pending_approval' ? <p class="hint">Waiting for a human: see <a href="#/approvals">Approvals</a>.</p> : null}
    </section>
  );
}

function ToolCard({ tool }: { tool: ToolEntry }) {
  const [open, setOpen] = useState(false);
  return (
    <article class="card tool" aria-label={`Tool ${tool.name}`}>
      <h3>
        <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>{tool.name}</button>
      </h3>
      <p class="tags">
        <span class="badge">{tool.source}</span>
        {tool.readOnly ? <span class="badge">read-only</span> : null}
        {tool.destructive ? <span class="badge denied">destructive</span> : null}
        {tool.deferLoading ? <span class="badge">deferred</span> : null}
        {(tool.aliases ?? []).map((alias) => <span class="badge" key={alias}>alias {alias}</span>)}
      </p>
      <p class="description">{tool.description}</p>
      {tool.searchHint ? <p class="hint">Search hint: {tool.searchHint}</p> : null}
      {open ? (
        <div>
          {tool.inputSchema ? <JsonBlock value={tool.inputSchema} label={`input schema of ${tool.name}`} /> : <p class="hint">Deferred: the model gets the schema through tool_search.</p>}
          <TryTool tool={tool} />
        </div>
      ) : null}
    </article>
  );
}

/** The tags a tool card shows, as the Tag filter offers them. */
const TAGS: Record<string, (tool: ToolEntry) => boolean> = {
  'read-only': (tool) => tool.readOnly,
  destructive: (tool) => tool.destructive,
  deferred: (tool) => tool.deferLoading === true,
  'has aliases': (tool) => (tool.aliases ?? []).length > 0,
};

export function ToolsPage({ me }: { me: Me }) {
  const pool = useApi<{ tools: ToolEntry[] }>('/v1/tools?format=native');
  const insight = useApi<Insight>(isAdmin(me) ? '/v1/admin/tools' : null);
  const [filter, setFilter] = useState('');
  const [source, setSource] = useState('');
  const [tag, setTag] = useState('');
  const all = pool.data?.tools ?? [];
  const sources = [...new Set(all.map((tool) => tool.source))].sort();
  const tools = all.filter((tool) => tool.name.toLowerCase().includes(filter.toLowerCase()) && (source === '' || tool.source === source) && (tag === '' || TAGS[tag]!(tool)));
  return (
    <div>
      <p class="hint">Your pool exactly as the model sees it ({all.length} tools). Open a tool to see its schema and try a call.</p>
      <div class="filters" role="search" aria-label="Filter tools">
        <div class="field">
          <label for="tool-filter">Name</label>
          <input id="tool-filter" type="search" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        </div>
        <FilterSelect id="tool-source" label="Source" value={source} options={sources} onChange={setSource} />
        <FilterSelect id="tool-tag" label="Tag" value={tag} options={Object.keys(TAGS)} onChange={setTag} />
      </div>
      {all.length > 0 && tools.length !== all.length ? <p class="hint" role="status">{tools.length} of {all.length} tools shown.</p> : null}
      <ErrorNote error={pool.error} />
      {tools.map((tool) => <ToolCard key={tool.name} tool={tool} />)}
      {isAdmin(me) ? (
        <section aria-labelledby="held-heading">
          <h2 id="held-heading">Held back from this pool</h2>
          <ErrorNote error={insight.error} />
          {insight.data && insight.data.heldBack.length === 0 && insight.data.shadowed.length === 0 ? <p class="empty">Nothing your tenant reaches is held back or shadowed.</p> : null}
          {insight.data && insight.data.heldBack.length > 0 ? (
            <DataTable caption="Tools your tenant reaches that are not in your pool" headers={['Tool', 'Source', 'Why']}>
              {insight.data.heldBack.map((entry) => (
                <tr key={`${entry.source}-${entry.name}`}><td>{entry.name}</td><td>{entry.source}{entry.service ? ` (${entry.service})` : ''}</td><td>{entry.reason}</td></tr>
              ))}
            </DataTable>
          ) : null}
          {insight.data && insight.data.shadowed.length > 0 ? (
            <DataTable caption="Shadowed names (a higher-precedence source wins)" headers={['Name', 'Winner', 'Hidden']}>
              {insight.data.shadowed.map((entry) => (
                <tr key={`${entry.name}-${entry.loser}-${entry.loserService ?? ''}`}><td>{entry.name}</td><td>{entry.winner}</td><td>{entry.loser}{entry.loserService ? ` (${entry.loserService})` : ''}</td></tr>
              ))}
            </DataTable>
          ) : null}
        </section>
      ) : null}
      {isAdmin(me) ? <CedarExplain /> : null}
    </div>
  );
}
