// A small REST API on loopback for the OpenAPI import tests (test/fixtures/openapi/pets-3.1.yaml):
// it records every request it sees (method, URL, headers, body) and answers like a real service.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface PetsApi {
  readonly base: string;
  readonly seen: SeenRequest[];
  /** Extra routes a test adds (matched on the path before the built-in ones). */
  routes: Map<string, (request: SeenRequest, reply: (status: number, body: string, headers?: Record<string, string>) => void) => void>;
  close(): Promise<void>;
}

export async function startPetsApi(host = '127.0.0.1'): Promise<PetsApi> {
  const seen: SeenRequest[] = [];
  const routes: PetsApi['routes'] = new Map();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(request);
      const reply = (status: number, text: string, headers: Record<string, string> = { 'content-type': 'application/json' }): void => {
        res.writeHead(status, headers);
        res.end(text);
      };
      const path = request.url.split('?')[0]!;
      const extra = routes.get(path);
      if (extra) return extra(request, reply);
      let match: RegExpExecArray | null;
      if (path === '/v1/pets' && request.method === 'POST') return reply(201, JSON.stringify({ id: 7, ...(JSON.parse(body || '{}') as object) }, null, 2));
      if (path === '/v1/pets' && request.method === 'GET') return reply(200, JSON.stringify([{ id: 1, name: 'Rex' }], null, 2));
      if ((match = /^\/v1\/pets\/([^/]+)$/.exec(path))) {
        if (request.method === 'DELETE') return reply(204, '', {});
        if (match[1] === '1') return reply(200, JSON.stringify({ id: 1, name: 'Rex', tag: null }, null, 2));
        return reply(404, JSON.stringify({ message: `no pet ${decodeURIComponent(match[1]!)}` }));
      }
      if ((match = /^\/v1\/owners\/([^/]+)\/pets$/.exec(path))) return reply(200, JSON.stringify({ owner: decodeURIComponent(match[1]!), pets: [] }));
      if (path === '/v1/broken') return reply(500, `database exploded ${'x'.repeat(2000)}`, { 'content-type': 'text/plain' });
      if ((match = /^\/v1\/notes\/([^/]+)$/.exec(path))) return reply(200, `note ${decodeURIComponent(match[1]!)}`, { 'content-type': 'text/plain; charset=utf-8' });
      return reply(404, JSON.stringify({ message: 'not found' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://${host}:${port}`,
    seen,
    routes,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
