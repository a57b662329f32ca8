import { api, isAdmin, type ApiBody, type Me } from '../api.js';
import { DataTable, ErrorNote, useAction, useApi } from '../components.js';
import { time } from '../format.js';

type Connection = ApiBody<'listConnections'>['connections'][number];
type ConnectedUser = ApiBody<'listTenantConnections'>['connections'][number];

/** The caller's connections to services that act as the user (userOAuth), and for admins who in the tenant is connected. Never a token. */
export function ConnectionsPage({ me }: { me: Me }) {
  const mine = useApi<{ connections: Connection[] }>('/v1/connections');
  const tenant = useApi<{ connections: ConnectedUser[] }>(isAdmin(me) ? '/v1/admin/connections' : null);
  const action = useAction();

  const connect = (service: string) =>
    action.run(async () => {
      const { body } = await api<{ authorizationUrl: string }>('POST', `/v1/connections/${encodeURIComponent(service)}`);
      // The authorization server's login runs in its own window; come back and refresh when done.
      window.open(body.authorizationUrl, '_blank', 'noopener');
    });
  const disconnect = (service: string) =>
    action.run(async () => {
      await api('DELETE', `/v1/connections/${encodeURIComponent(service)}`);
      mine.reload();
      tenant.reload();
    });

  return (
    <div>
      <p class="hint">Services that act as you: calls to them carry your own account's token, which you connect once here. toolgate keeps it encrypted; nobody can read it back.</p>
      <ErrorNote error={action.error} />
      <ErrorNote error={mine.error} />
      {mine.data && mine.data.connections.length === 0 ? <p class="empty">No service of your tenant needs a connection.</p> : null}
      {(mine.data?.connections ?? []).length > 0 ? (
        <DataTable caption="Your connections" headers={['Service', 'State', 'Scopes', 'Connected', 'Expires', '']}>
          {mine.data!.connections.map((row) => (
            <tr key={row.service}>
              <td>{row.service}</td>
              <td>{row.connected ? 'connected' : 'not connected'}</td>
              <td>{row.scopes.join(' ')}</td>
              <td>{row.connectedAt ? time(row.connectedAt) : ''}</td>
              <td>{row.expiresAt ? time(row.expiresAt) : ''}</td>
              <td>
                {row.connected ? (
                  <button type="button" class="danger" aria-label={`Disconnect ${row.service}`} disabled={action.busy} onClick={() => disconnect(row.service)}>Disconnect</button>
                ) : (
                  <button type="button" aria-label={`Connect ${row.service}`} disabled={action.busy} onClick={() => connect(row.service)}>Connect</button>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      <p><button type="button" onClick={() => mine.reload()}>Refresh</button></p>
      {isAdmin(me) ? (
        <>
          <ErrorNote error={tenant.error} />
          <DataTable caption="Who in your tenant is connected" headers={['Service', 'User', 'Connected', 'Expires']}>
            {(tenant.data?.connections ?? []).map((row) => (
              <tr key={`${row.service}\u0000${row.user}`}>
                <td>{row.service}</td>
                <td>{row.user}</td>
                <td>{time(row.connectedAt)}</td>
                <td>{row.expiresAt ? time(row.expiresAt) : ''}</td>
              </tr>
            ))}
          </DataTable>
        </>
      ) : null}
    </div>
  );
}
