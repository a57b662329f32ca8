import { useState } from 'preact/hooks';
import { api, type Me } from '../api.js';
import { DataTable, ErrorNote, useAction, useApi } from '../components.js';
import { time } from '../format.js';

// Browsers compile `pattern` with the `v` flag, where a `-` in a class must be escaped.
const SERVICE_ID_PATTERN = '[A-Za-z0-9\\-]{1,32}';

interface Server {
  serviceId: string;
  serviceKey: string;
  url: string;
  transport: string;
  headerNames: string[];
  createdAt: string;
}

export function MyServersPage({ me }: { me: Me }) {
  const base = `/v1/users/${encodeURIComponent(me.user)}/mcp-servers`;
  const servers = useApi<{ servers: Server[] }>(base);
  const [serviceId, setServiceId] = useState('');
  const [url, setUrl] = useState('');
  const [transport, setTransport] = useState('streamable-http');
  const action = useAction();
  const error = action.error;

  const register = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('PUT', `${base}/${encodeURIComponent(serviceId.trim())}`, { body: { url: url.trim(), transport } });
      setServiceId('');
      setUrl('');
      servers.reload();
    });
  };
  const remove = (id: string) =>
    action.run(async () => {
      await api('DELETE', `${base}/${encodeURIComponent(id)}`);
      servers.reload();
    });

  return (
    <div>
      <p class="hint">Your own remote MCP servers: their tools join your pool as <code>user_…_tool_…</code>. URLs must pass the gateway's egress policy (private and loopback addresses are refused unless allowed).</p>
      <form class="inline-form" onSubmit={register}>
        <div class="field">
          <label for="server-id">Service id (letters, digits, -)</label>
          <input id="server-id" required pattern={SERVICE_ID_PATTERN} value={serviceId} onInput={(e) => setServiceId((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="server-url">Server URL</label>
          <input id="server-url" type="url" required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="server-transport">Transport</label>
          <select id="server-transport" value={transport} onChange={(e) => setTransport((e.target as HTMLSelectElement).value)}>
            <option value="streamable-http">streamable-http</option>
            <option value="sse">sse</option>
          </select>
        </div>
        <button type="submit" disabled={action.busy}>Register</button>
      </form>
      {error && (error as { code?: string }).code === 'TG_EGRESS_DENIED' ? <p class="error egress" role="alert"><strong>Refused by the egress policy:</strong> {(error as Error).message}</p> : <ErrorNote error={error} />}
      <ErrorNote error={servers.error} />
      {servers.data && servers.data.servers.length === 0 ? <p class="empty">You have registered no MCP server.</p> : null}
      {(servers.data?.servers ?? []).length > 0 ? (
        <DataTable caption="Your MCP servers" headers={['Service', 'URL', 'Transport', 'Headers', 'Registered', '']}>
          {servers.data!.servers.map((server) => (
            <tr key={server.serviceId}>
              <td>{server.serviceId}</td>
              <td class="wrap">{server.url}</td>
              <td>{server.transport}</td>
              <td>{server.headerNames.join(', ')}</td>
              <td>{time(server.createdAt)}</td>
              <td><button type="button" class="danger" aria-label={`Remove ${server.serviceId}`} onClick={() => remove(server.serviceId)}>Remove</button></td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </div>
  );
}
