import { useState } from 'preact/hooks';
import { api, type ApiBody, type Me } from '../api.js';
import { DataTable, ErrorNote, useAction, useApi } from '../components.js';
import { time } from '../format.js';

type KeyView = ApiBody<'listApiKeys'>['keys'][number];

export function KeysPage({ me }: { me: Me }) {
  const keys = useApi<{ keys: KeyView[] }>('/v1/admin/keys');
  const [user, setUser] = useState('');
  const [roles, setRoles] = useState('');
  const [created, setCreated] = useState<{ key: string; apiKey: KeyView } | null>(null);
  const action = useAction();

  const create = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const roleList = roles.split(/[\s,]+/).filter(Boolean);
      const answer = await api<{ key: string; apiKey: KeyView }>('POST', '/v1/admin/keys', { body: { user: user.trim(), roles: roleList } });
      setCreated(answer.body);
      setUser('');
      setRoles('');
      keys.reload();
    });
  };
  const revoke = (id: string) =>
    action.run(async () => {
      await api('DELETE', `/v1/admin/keys/${encodeURIComponent(id)}`);
      if (created?.apiKey.id === id) setCreated(null);
      keys.reload();
    });

  return (
    <div>
      <p class="hint">Runtime API keys of tenant {me.tenant}. A key is shown once, when created; only its SHA-256 is stored. Keys from the config file are not listed here.</p>
      <form class="inline-form" onSubmit={create}>
        <div class="field">
          <label for="key-user">User the key acts as</label>
          <input id="key-user" required pattern="[A-Za-z0-9._@\-]{1,128}" value={user} onInput={(e) => setUser((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="key-roles">Roles (comma separated)</label>
          <input id="key-roles" value={roles} placeholder="approver" onInput={(e) => setRoles((e.target as HTMLInputElement).value)} />
        </div>
        <button type="submit" disabled={action.busy}>Create key</button>
      </form>
      <ErrorNote error={action.error} />
      {created ? (
        <div class="card once" role="status">
          <p><strong>New key for {created.apiKey.user}</strong> — copy it now, it is not shown again:</p>
          <pre class="json" aria-label="new API key" tabIndex={0}>{created.key}</pre>
          <button type="button" onClick={() => setCreated(null)}>Done</button>
        </div>
      ) : null}
      <ErrorNote error={keys.error} />
      {keys.data && keys.data.keys.length === 0 ? <p class="empty">No runtime keys.</p> : null}
      {(keys.data?.keys ?? []).length > 0 ? (
        <DataTable caption="Runtime API keys" headers={['Id', 'User', 'Roles', 'Created', 'Last used', '']}>
          {keys.data!.keys.map((key) => (
            <tr key={key.id}>
              <td>{key.id}</td>
              <td>{key.user}</td>
              <td>{key.roles.join(', ') || '—'}</td>
              <td>{time(key.createdAt)} by {key.createdBy}</td>
              <td>{key.lastUsedAt ? time(key.lastUsedAt) : 'never'}</td>
              <td><button type="button" class="danger" aria-label={`Revoke ${key.id}`} onClick={() => revoke(key.id)}>Revoke</button></td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </div>
  );
}
