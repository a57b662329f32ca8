// An upstream's question during a 2026-07-28 caller's tools/call travels as `input_required` (SEP-2322) and the
// caller's retry with toolgate's sealed `requestState` and its answer completes the call: the real
// server-everything (a legacy upstream whose connection waits for the answer) and a modern upstream fixture (SDK v2,
// its own input_required) behind a real gateway listener, asked by the SDK v2 client in the modern era and by raw
// POSTs; tampered, replayed, expired, other-user and other-call states refused alike.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src/audit/types.js';
import { createRequestStateSealer } from '../../../src/mcp/request-state.js';
import { MAX_HELD_PER_TENANT } from '../../../src/mcp/server/held-calls.js';
import { GONE_TEXT, stateBindingOf } from '../../../src/mcp/server/modern-questions.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createVault } from '../../../src/upstream-auth/vault.js';
import { startEverythingHttp, type SpawnedServer } from '../../fixtures/mcp/spawn-everything.js';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';
import { MODERN_VERSION, modernPost, type ModernAnswer } from '../../helpers/mcp-modern.js';
import { expectVictimServedDuring, repeatUntil, VICTIM_FUNCTIONS, VICTIM_TENANT, VICTIM_TENANT_CONFIG, victimOf } from '../../helpers/victim-tenant.js';
import { confirmTool, startModernUpstream, type ModernTool, type ModernUpstream } from '../../helpers/modern-upstream.js';

const KEY = Buffer.alloc(32, 7).toString('base64');
const ELICIT = 'trigger-elicitation-request';
let everything: SpawnedServer;
let modern: ModernUpstream;
let app: FastifyInstance;
let baseUrl: string;
let alice: string;
let bob: string;
const audit: AuditEvent[] = [];

const modernTools: ModernTool[] = [confirmTool];

beforeAll(async () => {
  [everything, modern] = await Promise.all([startEverythingHttp(), startModernUpstream(modernTools)]);
  app = await buildTestApp(
    testConfig({
      credentials: { keys: [{ id: 'k1', key: KEY }] },
      mcp: {
        global: [
          { id: 'everything', transport: 'streamable-http', url: everything.url, required: true },
          { id: 'modern', transport: 'streamable-http', url: modern.url, required: true },
        ],
      },
      functions: VICTIM_FUNCTIONS,
      tenants: {
        [VICTIM_TENANT]: VICTIM_TENANT_CONFIG,
        umbrella: { mcpServices: ['everything'] },
        acme: { mcpServices: ['everything', 'modern'] },
        globex: { mcpServices: ['everything', 'modern'], mcp: { relay: { elicitation: false, sampling: false } } },
      },
    }),
  );
  const write = app.audit.write.bind(app.audit);
  app.audit.write = (event) => {
    audit.push(event);
    write(event);
  };
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  [alice, bob] = await Promise.all([signToken({ sub: 'alice' }), signToken({ sub: 'bob' })]);
}, 60_000);
afterAll(async () => {
  await app?.close();
  await Promise.all([everything?.kill(), modern?.close()]);
});

/** The SDK v2 client in the modern era, declaring elicitation and answering every question with `content`. */
async function modernCaller(token: string, content: Record<string, unknown>, asked: string[]): Promise<Client> {
  const client = new Client({ name: 'modern-asked', version: '1.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: content as Record<string, string> };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(token) } }));
  return client;
}

const text = (result: { content?: unknown }): string => (Array.isArray(result.content) ? result.content.map((block: { text?: string }) => block.text ?? '').join('\n') : '');
const elicits = { elicitation: {} };
const call = (token: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = elicits): Promise<ModernAnswer> =>
  modernPost(baseUrl, token, 'tools/call', { name: ELICIT, arguments: {}, ...params }, { capabilities });

/** A first round of the everything elicitation as alice: the question and toolgate's sealed state. */
async function asked(): Promise<{ requestState: string; key: string; question: { method: string; params: { message: string } } }> {
  const first = await call(alice, {});
  expect(first.status).toBe(200);
  const result = first.body.result as { resultType: string; requestState: string; inputRequests: Record<string, { method: string; params: { message: string } }> };
  expect(result.resultType).toBe('input_required');
  const [[key, question]] = Object.entries(result.inputRequests) as [[string, { method: string; params: { message: string } }]];
  return { requestState: result.requestState, key, question };
}

const accept = (key: string, name: string) => ({ [key]: { action: 'accept', content: { name, check: true } } });
const refusedAsInvalid = (answer: ModernAnswer): void => {
  expect(answer.body.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
  expect(answer.body.result).toBeUndefined();
};

describe('input_required to a modern caller', () => {
  it("carries server-everything's elicitation (a legacy upstream) to the SDK v2 client, and its answer completes the call", async () => {
    const questions: string[] = [];
    const client = await modernCaller(alice, { name: 'Ada Lovelace', check: true }, questions);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
      const result = (await client.callTool({ name: ELICIT, arguments: {} })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(text(result)).toContain('Ada Lovelace');
      expect(questions).toEqual(['Please provide inputs for the following fields:']);
      // Relayed under the same rules and audit line as for a legacy session, never with its content.
      const line = audit.filter((event) => event.event === 'relay').at(-1);
      expect(line).toMatchObject({ tenant: 'acme', user: 'alice', kind: 'elicitation', service: 'everything', outcome: 'relayed' });
      expect(JSON.stringify(line)).not.toContain('Ada');
      // The completed call has its own call line, as any call.
      expect(audit.some((event) => event.event === 'call' && event.user === 'alice' && event.tool === ELICIT && event.outcome === 'ok')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("carries a modern upstream's own input_required to the SDK v2 client, and its answer completes the call", async () => {
    const questions: string[] = [];
    const client = await modernCaller(alice, { colour: 'teal' }, questions);
    try {
      const result = (await client.callTool({ name: 'm_confirm', arguments: {} })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(text(result)).toBe('modern asked:teal');
      expect(questions).toEqual(['Which colour (modern)?']);
    } finally {
      await client.close();
    }
  });

  it('answers input_required with the question and a sealed state, which opens once, for this caller and call only', async () => {
    const { requestState, key, question } = await asked();
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: 'Please provide inputs for the following fields:' } });
    // Sealed: nothing of the call, the caller or the replica is readable in it.
    expect(requestState).toMatch(/^v1\.k1\./);
    expect(requestState).not.toContain('alice');
    // One character changed: the one before last, to a letter it is not (choosing by the last one left it as it was when they differed and it was already 'A').
    const at = requestState.length - 2;
    const tampered = `${requestState.slice(0, at)}${requestState[at] === 'A' ? 'B' : 'A'}${requestState.slice(at + 1)}`;
    expect(tampered).not.toBe(requestState);
    refusedAsInvalid(await call(alice, { requestState: tampered, inputResponses: accept(key, 'Mallory') }));
    // Another user of the same tenant, and another tenant, presenting alice's state: the same answer.
    refusedAsInvalid(await call(bob, { requestState, inputResponses: accept(key, 'Mallory') }));
    refusedAsInvalid(await call(await signToken({ sub: 'alice', tenant: 'globex' }), { requestState, inputResponses: accept(key, 'Mallory') }));
    // Alice's state continues only the call it was minted for.
    refusedAsInvalid(await call(alice, { name: 'm_confirm', requestState, inputResponses: accept(key, 'Mallory') }));
    // None of those consumed it: alice's own retry completes the call with her answer.
    const done = await call(alice, { requestState, inputResponses: accept(key, 'Grace Hopper') });
    expect(done.body.error).toBeUndefined();
    expect(done.body.result).toMatchObject({ isError: false });
    expect(text(done.body.result!)).toContain('Grace Hopper');
    expect(text(done.body.result!)).not.toContain('Mallory');
    // Replayed: refused, the same way.
    refusedAsInvalid(await call(alice, { requestState, inputResponses: accept(key, 'Grace Hopper') }));
  });

  it('refuses an expired state as any other', async () => {
    // A state sealed with the gateway's own key for alice and this very call, whose expiry has passed.
    const past = createRequestStateSealer({ vault: createVault({ keys: [{ id: 'k1', key: KEY }] }), store: createMemoryStore(), now: () => Date.now() - 2 * 60 * 60 * 1000 });
    const requestState = past.seal(stateBindingOf({ tenant: 'acme', user: 'alice' }, { name: ELICIT, arguments: {}, toolset: undefined }), JSON.stringify({ k: 'rerun' }), 60_000);
    refusedAsInvalid(await call(alice, { requestState, inputResponses: {} }));
    // The same state with a fresh expiry opens (so the refusal above is the expiry's).
    const fresh = createRequestStateSealer({ vault: createVault({ keys: [{ id: 'k1', key: KEY }] }), store: createMemoryStore() });
    const rerun = await call(alice, { requestState: fresh.seal(stateBindingOf({ tenant: 'acme', user: 'alice' }, { name: ELICIT, arguments: {}, toolset: undefined }), JSON.stringify({ k: 'rerun' }), 60_000) });
    expect((rerun.body.result as { resultType?: string }).resultType).toBe('input_required');
  });

  it('asks again, with a new state, a question the retry did not answer', async () => {
    const { requestState, key } = await asked();
    const again = await call(alice, { requestState, inputResponses: {} });
    const result = again.body.result as { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
    expect(result.resultType).toBe('input_required');
    expect(Object.keys(result.inputRequests)).toEqual([key]);
    expect(result.requestState).not.toBe(requestState);
    const done = await call(alice, { requestState: result.requestState, inputResponses: accept(key, 'Barbara Liskov') });
    expect(text(done.body.result!)).toContain('Barbara Liskov');
  });

  it('refuses the question toward the upstream when the caller did not declare elicitation or its tenant turns it off', async () => {
    const undeclared = await call(alice, {}, {});
    expect((undeclared.body.result as { resultType?: string }).resultType).toBe('complete');
    expect(undeclared.body.result).toMatchObject({ isError: true });
    expect(text(undeclared.body.result!)).toContain('did not declare the elicitation capability');
    const globex = await call(await signToken({ sub: 'gail', tenant: 'globex' }), {});
    expect(globex.body.result).toMatchObject({ isError: true });
    expect(text(globex.body.result!)).toContain("the tenant's policy mcp.relay.elicitation is off");
  });

  it('answers a state whose call is no longer held with a tool error saying to call again', async () => {
    const { key } = await asked();
    // A well-sealed state naming a held call that does not exist (a restarted replica's, say).
    const sealer = createRequestStateSealer({ vault: createVault({ keys: [{ id: 'k1', key: KEY }] }), store: createMemoryStore() });
    const requestState = sealer.seal(stateBindingOf({ tenant: 'acme', user: 'alice' }, { name: ELICIT, arguments: {}, toolset: undefined }), JSON.stringify({ k: 'held', h: 'gone-replica', c: 'x' }), 60_000);
    const answer = await call(alice, { requestState, inputResponses: accept(key, 'Nobody') });
    expect(answer.body.result).toMatchObject({ isError: true });
    expect(text(answer.body.result!)).toBe(GONE_TEXT);
  }, 45_000);
});

describe('a tenant that leaves questions unanswered', () => {
  it('holds at most its bound of calls, refuses the rest toward the upstream, and another tenant is served (and asked) meanwhile', async () => {
    const victim = await victimOf(app);
    const attacker = await signToken({ sub: 'eve', tenant: 'umbrella' });
    const held: string[] = [];
    const refused: string[] = [];
    const fire = async (count: number): Promise<void> => {
      const answers = await Promise.all(Array.from({ length: count }, () => call(attacker, {})));
      for (const answer of answers) {
        const result = answer.body.result as { resultType?: string; isError?: boolean; content?: unknown };
        if (result.resultType === 'input_required') held.push('held');
        else if (result.isError && text(result).includes(`more than ${MAX_HELD_PER_TENANT} calls of this tenant wait`)) refused.push('refused');
        // Its own refused questions fail its calls upstream: the attacker's circuit (per tenant) may open, which
        // refuses it too and never another tenant (asked() below runs on the same upstream afterwards).
        else if (result.isError && text(result).includes('"errorType":"CIRCUIT_OPEN"')) refused.push('circuit open');
        else throw new Error(`unexpected answer ${JSON.stringify(answer.body)}`);
      }
    };
    await expectVictimServedDuring(app, victim, (rounds) => repeatUntil(rounds, (repeat) => fire(repeat === 0 ? MAX_HELD_PER_TENANT + 6 : 6), { maxRepeats: 200 }));
    expect(held).toHaveLength(MAX_HELD_PER_TENANT);
    expect(refused.length).toBeGreaterThanOrEqual(6);
    // Another tenant's caller is still asked, and its answer completes its call.
    const { requestState, key } = await asked();
    const done = await call(alice, { requestState, inputResponses: accept(key, 'Katherine Johnson') });
    expect(text(done.body.result!)).toContain('Katherine Johnson');
  }, 90_000);
});
