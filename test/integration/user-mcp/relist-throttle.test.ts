// A user's server that announces `tools/list_changed` without end must not make the gateway re-list and
// rebuild that user's tools on every request: a listing is kept at least `minRelistMs`
// (docs/security-model.md#user-catalog-bounds).
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserMcpRegistrations } from '../../../src/mcp/user/registrations.js';
import { createUserMcpProvider, type UserMcpProvider } from '../../../src/mcp/user/user-mcp-provider.js';
import type { Principal } from '../../../src/call/principal.js';
import { createTestStore } from '../../helpers/memory-store.js';
import { createTestState, echoTool, notifyToolsChanged, startHttpTestServer, type HttpTestServer, type TestServerState } from '../../fixtures/mcp/test-server.js';

const log = pino({ level: 'silent' });
const egress = { allow: ['127.0.0.1'], resolve: async () => [] };
const alice: Principal = { tenant: 'acme', user: 'alice', roles: [], claims: { sub: 'alice' } };
const MIN_RELIST_MS = 400;

let state: TestServerState;
let upstream: HttpTestServer;
let provider: UserMcpProvider;

beforeAll(async () => {
  state = createTestState([echoTool]);
  upstream = await startHttpTestServer(state);
  const registrations = createUserMcpRegistrations({ store: createTestStore(), egress, maxServers: () => 5 });
  await registrations.put('acme', 'alice', 'noisy', { url: upstream.url });
  provider = createUserMcpProvider({ registrations, egress, minRelistMs: MIN_RELIST_MS });
});
afterAll(async () => {
  await provider?.close();
  await upstream?.close();
});

const listings = () => upstream.messages.filter((message) => message.method === 'tools/list').length;
const waitFor = async (condition: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
};

const named = (name: string) => ({ ...echoTool, definition: { ...echoTool.definition, name } });

describe('re-listing a user server that keeps saying its tools changed', () => {
  it('re-lists at most once per minRelistMs, and returns the same list object in between', async () => {
    expect((await provider.toolsFor(alice, log)).map((tool) => tool.name)).toEqual(['user_alice_tool_echo']);
    expect(listings()).toBe(1);
    // The SDK opens its event stream after initialize: wait until a notification can reach it.
    await waitFor(() => upstream.allHeaders.some((headers) => headers.accept === 'text/event-stream'));
    await new Promise((resolve) => setTimeout(resolve, MIN_RELIST_MS));

    // A change past the interval is picked up at once.
    state.tools = [echoTool, named('echo2')];
    await notifyToolsChanged(state);
    let current = await provider.toolsFor(alice, log);
    for (let i = 0; i < 100 && current.length < 2; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      current = await provider.toolsFor(alice, log);
    }
    expect(current.map((tool) => tool.name)).toEqual(['user_alice_tool_echo', 'user_alice_tool_echo2']);
    expect(listings()).toBe(2);

    // Within the interval, announcements without end change nothing: same list, no listing, nothing rebuilt.
    state.tools = [echoTool, named('echo2'), named('echo3')];
    const started = Date.now();
    for (let i = 0; i < 20 && Date.now() - started < MIN_RELIST_MS / 2; i += 1) {
      await notifyToolsChanged(state);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await provider.toolsFor(alice, log)).toBe(current);
    }
    expect(listings()).toBe(2);

    // Once the interval has passed, the next request lists again.
    await new Promise((resolve) => setTimeout(resolve, MIN_RELIST_MS));
    expect((await provider.toolsFor(alice, log)).map((tool) => tool.name)).toEqual(['user_alice_tool_echo', 'user_alice_tool_echo2', 'user_alice_tool_echo3']);
    expect(listings()).toBe(3);
  });
});
