import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, isAdmin, session, type Me } from './api.js';
import { ErrorNote, useApi } from './components.js';
import { ApprovalsPage } from './pages/approvals.js';
import { AuditPage } from './pages/audit.js';
import { GuardrailsPage } from './pages/guardrails.js';
import { ConnectionsPage } from './pages/connections.js';
import { KeysPage } from './pages/keys.js';
import { MyServersPage } from './pages/my-servers.js';
import { OverviewPage } from './pages/overview.js';
import { TenantsPage } from './pages/tenants.js';
import { ToolsPage } from './pages/tools.js';
import { UpstreamsPage } from './pages/upstreams.js';
import { UsagePage } from './pages/usage.js';

/**
 * On a phone the navigation is one scrolling row: the current page's link is scrolled into it, so the row
 * never hides where the user is (a no-op where the whole list is visible).
 */
const showInRow = (link: HTMLAnchorElement | null): void => {
  link?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
};
import './styles.css';

interface PageDef {
  path: string;
  title: string;
  /** Shown in the navigation only when this holds; the server refuses the API calls anyway. */
  allowed: (me: Me) => boolean;
  /** `tenant`: the tenant a global operator chose on a page that has `perTenant` (undefined: its own). */
  render: (me: Me, tenant: string | undefined) => preact.JSX.Element;
  /** The page reads one tenant's data, and a global operator may choose which (GET /v1/admin/tenants). */
  perTenant?: boolean;
}

const adminOrOperator = (me: Me): boolean => isAdmin(me) || me.operator;

const PAGES: PageDef[] = [
  { path: 'approvals', title: 'Approvals', allowed: () => true, render: (me) => <ApprovalsPage me={me} /> },
  { path: 'tools', title: 'Tools', allowed: () => true, render: (me) => <ToolsPage me={me} /> },
  { path: 'upstreams', title: 'Upstreams', allowed: (me) => isAdmin(me) || me.operator, render: (me) => <UpstreamsPage me={me} /> },
  { path: 'my-servers', title: 'My MCP servers', allowed: () => true, render: (me) => <MyServersPage me={me} /> },
  { path: 'connections', title: 'Connections', allowed: () => true, render: (me) => <ConnectionsPage me={me} /> },
  { path: 'audit', title: 'Audit', allowed: adminOrOperator, perTenant: true, render: (_me, tenant) => <AuditPage key={tenant ?? ''} tenant={tenant} /> },
  { path: 'guardrails', title: 'Guardrails', allowed: adminOrOperator, perTenant: true, render: (_me, tenant) => <GuardrailsPage key={tenant ?? ''} tenant={tenant} /> },
  { path: 'keys', title: 'API keys', allowed: isAdmin, render: (me) => <KeysPage me={me} /> },
  { path: 'overview', title: 'Overview', allowed: adminOrOperator, perTenant: true, render: (_me, tenant) => <OverviewPage tenant={tenant} /> },
  { path: 'tenants', title: 'Tenants', allowed: (me) => me.operator, render: () => <TenantsPage /> },
  { path: 'usage', title: 'Usage', allowed: () => true, render: (me) => <UsagePage me={me} /> },
];

/** A global operator's choice of tenant for the per-tenant pages (the server checks it is an operator). */
function TenantPicker({ me, tenant, onChange }: { me: Me; tenant: string | undefined; onChange: (tenant: string | undefined) => void }) {
  const tenants = useApi<{ tenants: string[] }>('/v1/admin/tenants?limit=1000');
  return (
    <div class="scope">
      <label for="view-tenant">Tenant</label>
      <select id="view-tenant" value={tenant ?? me.tenant} onChange={(e) => { const value = (e.target as HTMLSelectElement).value; onChange(value === me.tenant ? undefined : value); }}>
        {(tenants.data?.tenants ?? [me.tenant]).map((id) => <option key={id} value={id}>{id}{id === me.tenant ? ' (yours)' : ''}</option>)}
      </select>
      <span class="hint">As a global operator you may read any tenant's audit and activity.</span>
      <ErrorNote error={tenants.error} />
    </div>
  );
}

const currentPath = (): string => location.hash.replace(/^#\/?/, '') || 'approvals';

function SignIn({ onSignedIn, problem }: { onSignedIn: (me: Me) => void; problem: string | null }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(problem);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = token.trim();
    if (value.length === 0) return setError('Paste an API key or a JWT.');
    setBusy(true);
    session.signIn(value);
    try {
      const me = (await api<Me>('GET', '/v1/me')).body;
      setToken('');
      onSignedIn(me);
    } catch (failure) {
      session.signOut();
      setError(failure instanceof ApiError ? `${failure.message} (${failure.code})` : 'The gateway did not answer.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>toolgate console</h1>
      <form onSubmit={submit}>
        <label for="token">API key or token (JWT)</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck={false} value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
        <p class="hint">Kept in this tab only (sessionStorage) and sent as <code>Authorization: Bearer</code>.</p>
        <button type="submit" disabled={busy}>Sign in</button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(session.token() !== null);
  const [problem, setProblem] = useState<string | null>(null);
  const [path, setPath] = useState(currentPath());
  const [viewTenant, setViewTenant] = useState<string | undefined>(undefined);

  useEffect(() => {
    const onHash = () => setPath(currentPath());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    if (!session.token()) return;
    api<Me>('GET', '/v1/me')
      .then((answer) => setMe(answer.body))
      .catch((failure: unknown) => {
        session.signOut();
        setProblem(failure instanceof ApiError ? `Signed out: ${failure.message}` : 'Signed out.');
      })
      .finally(() => setChecking(false));
  }, []);
  // A revoked or expired token signs the console out on the next refused request (see components.ts).
  useEffect(() => {
    const onRefused = (event: Event) => {
      session.signOut();
      setMe(null);
      setProblem((event as CustomEvent<string>).detail);
    };
    addEventListener('toolgate:unauthenticated', onRefused);
    return () => removeEventListener('toolgate:unauthenticated', onRefused);
  }, []);

  if (checking) return <main class="signin"><p>Checking your session…</p></main>;
  if (!me) return <SignIn onSignedIn={(who) => { setProblem(null); setMe(who); }} problem={problem} />;

  const pages = PAGES.filter((page) => page.allowed(me));
  const page = pages.find((candidate) => candidate.path === path) ?? pages[0]!;
  return (
    <div class="shell">
      <header>
        <span class="brand">toolgate</span>
        <span class="who" aria-label="Signed in as">
          {me.user} · tenant <strong>{me.tenant}</strong> · {me.roles.length > 0 ? me.roles.join(', ') : 'no roles'}
          {me.operator ? ' · operator' : ''}
        </span>
        <button type="button" class="link" onClick={() => { session.signOut(); setMe(null); setViewTenant(undefined); }}>Sign out</button>
      </header>
      <nav aria-label="Console pages">
        <ul>
          {pages.map((candidate) => (
            <li key={candidate.path}>
              <a href={`#/${candidate.path}`} aria-current={candidate === page ? 'page' : undefined} ref={candidate === page ? showInRow : undefined}>{candidate.title}</a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="page" key={page.path}>
        <h1>{page.title}</h1>
        {page.perTenant && me.operator ? <TenantPicker me={me} tenant={viewTenant} onChange={setViewTenant} /> : null}
        {page.render(me, page.perTenant && me.operator ? viewTenant : undefined)}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
