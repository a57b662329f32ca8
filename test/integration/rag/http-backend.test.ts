// The http backend against a real retrieval stub on loopback: request shape, mapping, 5xx, bad JSON,
// timeout and cancellation.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/call/tool-error.js';
import { createHttpAgent } from '../../../src/egress/http-client.js';
import { createHttpBackend } from '../../../src/rag/http-backend.js';
import { createRagTool, type RagTrace } from '../../../src/rag/tool.js';
import { fakeContext, ragEntry } from '../../unit/rag/fixtures.js';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: unknown;
}

type Reply = (res: ServerResponse) => void;

const seen: Seen[] = [];
let reply: Reply = () => undefined;
let server: Server;
let url: string;
const never = new AbortController().signal;
const agent = createHttpAgent();

function json(status: number, body: unknown): Reply {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(Buffer.concat(parts).toString('utf8')) });
      reply(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/search`;
});

afterAll(async () => {
  await agent.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen.length = 0;
});

function backend(overrides: { timeoutMs?: number; headers?: Record<string, string>; maxResponseBytes?: number } = {}) {
  return createHttpBackend({ url, headers: overrides.headers ?? { authorization: 'Bearer service-secret' }, timeoutMs: overrides.timeoutMs ?? 5000, dataset: 'handbook', dispatcher: agent, ...(overrides.maxResponseBytes ? { maxResponseBytes: overrides.maxResponseBytes } : {}) });
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error: unknown = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

describe('http retrieval backend', () => {
  it('POSTs query, filter, topK and dataset as JSON with the configured headers only', async () => {
    reply = json(200, { hits: [] });
    await backend({ headers: { authorization: 'Bearer service-secret', 'Content-Type': 'text/plain', 'x-extra': '1' } }).search('vacation', { tenant: 'acme' }, 3, never);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/search', body: { query: 'vacation', filter: { tenant: 'acme' }, topK: 3, dataset: 'handbook' } });
    expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer service-secret', 'content-type': 'application/json', 'x-extra': '1' });
  });

  it('never forwards the caller’s Authorization through the tool', async () => {
    reply = json(200, { hits: [] });
    const tool = createRagTool(ragEntry(), backend({ headers: {} }));
    await tool.handler({ query: 'vacation', filter: { tenant: 'acme' } }, fakeContext());
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('maps hits, fills defaults, cuts to topK and cites the reranked order', async () => {
    reply = json(200, {
      hits: [
        { id: 1, score: 2.5, text: 'One', source: 'one.md', metadata: { tenant: 'acme', page: 2 } },
        { id: 'two', text: 'Two' },
        { id: 'three', text: 'Three' },
      ],
      reranked: [{ id: 'two', score: 9, text: 'Two', metadata: { tenant: 'acme', title: 'Second' } }],
    });
    const result = await backend().search('q', { tenant: 'acme' }, 2, never);
    expect(result.hits).toEqual([
      { id: '1', score: 2.5, text: 'One', source: 'one.md', metadata: { tenant: 'acme', page: 2 } },
      { id: 'two', score: 0, text: 'Two', source: 'two', metadata: {} },
    ]);
    expect(result.reranked!.map((hit) => hit.id)).toEqual(['two']);
    expect(result.citations).toEqual([expect.objectContaining({ citationId: 'S1', sourceName: 'Second', sourcePath: 'two' })]);
  });

  it('turns a 5xx into UPSTREAM_ERROR naming the status', async () => {
    reply = json(503, { error: 'index rebuilding' });
    const error = await failure(backend().search('q', { tenant: 'acme' }, 2, never));
    expect(error.errorType).toBe('UPSTREAM_ERROR');
    expect(error.message).toContain('HTTP 503');
  });

  it('turns a body that is not JSON, or JSON of the wrong shape, into UPSTREAM_ERROR', async () => {
    reply = json(200, '<html>oops</html>');
    expect((await failure(backend().search('q', { tenant: 'acme' }, 2, never))).message).toContain('not JSON');
    reply = json(200, { results: [] });
    expect((await failure(backend().search('q', { tenant: 'acme' }, 2, never))).message).toContain('"hits" array');
    reply = json(200, { hits: [{ id: 'x' }] });
    expect((await failure(backend().search('q', { tenant: 'acme' }, 2, never))).message).toContain('hits[0] without text');
    reply = json(200, { hits: [{ id: 'x', text: 't', metadata: [1] }] });
    expect((await failure(backend().search('q', { tenant: 'acme' }, 2, never))).errorType).toBe('UPSTREAM_ERROR');
  });

  it('refuses an answer larger than the configured bound', async () => {
    reply = json(200, { hits: [{ id: 'x', text: 'y'.repeat(5000) }] });
    const error = await failure(backend({ maxResponseBytes: 1024 }).search('q', { tenant: 'acme' }, 2, never));
    expect(error).toMatchObject({ errorType: 'UPSTREAM_ERROR', message: expect.stringContaining('exceeds 1024 bytes') });
  });

  it('answers TIMEOUT when the service does not answer within its timeout', async () => {
    reply = () => undefined; // holds the request open; closed in afterAll
    const error = await failure(backend({ timeoutMs: 150 }).search('q', { tenant: 'acme' }, 2, never));
    expect(error.errorType).toBe('TIMEOUT');
    expect(error.message).toContain('150 ms');
  });

  it('stops at once when the call’s own signal aborts, passing its reason on', async () => {
    reply = () => undefined;
    const controller = new AbortController();
    const pending = backend({ timeoutMs: 60_000 }).search('q', { tenant: 'acme' }, 2, controller.signal);
    while (seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new ToolError('TIMEOUT', 'call timed out'));
    expect(await failure(pending)).toMatchObject({ errorType: 'TIMEOUT', message: 'call timed out' });
  });

  it('answers UPSTREAM_ERROR when nothing listens', async () => {
    const closed = createHttpBackend({ url: 'http://127.0.0.1:9/search', headers: {}, timeoutMs: 2000, dispatcher: agent });
    expect((await failure(closed.search('q', { tenant: 'acme' }, 2, never))).errorType).toBe('UPSTREAM_ERROR');
    expect(closed.stats()).toMatchObject({ kind: 'http', failures: 1, lastError: expect.stringContaining('unreachable') });
  });

  it('gives the tool a trace of the remote hits', async () => {
    reply = json(200, { hits: [{ id: 'r1', score: 1, text: 'Remote passage', source: 'remote.md', metadata: { tenant: 'acme' } }] });
    const tool = createRagTool(ragEntry(), backend());
    const { output, trace } = (await tool.handler({ query: 'q', filter: { tenant: 'acme' } }, fakeContext())) as { output: string; trace: RagTrace };
    expect(output).toBe('[S1] remote.md\nRemote passage');
    expect(trace).toMatchObject({ backend: 'http', dataset: 'handbook', filter: { tenant: 'acme' }, retrievedHits: [{ id: 'r1', source: 'remote.md' }] });
  });
});
