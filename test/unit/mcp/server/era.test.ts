// The era of a POST to /mcp (src/mcp/server/era.ts): whatever shortcut it takes, it routes every body exactly as
// the SDK's own classification does, hostile shapes included (a posted response that also claims the envelope,
// an initialize with a bad claim, a claim in a batch).
import { describe, expect, it } from 'vitest';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { isLegacyPost } from '../../../../src/mcp/server/era.js';

const KEY = 'io.modelcontextprotocol/protocolVersion';
const envelope = { [KEY]: '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const call = { name: 'echo', arguments: { message: 'hi' } };

const bodies: Array<[string, unknown]> = [
  ['a modern tools/call', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: envelope } }],
  ['a modern server/discover', { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope } }],
  ['a claim naming a legacy revision', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { ...envelope, [KEY]: '2025-11-25' } } }],
  ['a claim with a non-string value', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [KEY]: 7 } } }],
  ['a claim with nothing else in the envelope', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [KEY]: '2026-07-28' } } }],
  ['a claim on a notification', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: envelope } }],
  ['a claim on a body that is no JSON-RPC message', { method: 'tools/call', params: { _meta: envelope } }],
  ['a claim on a body whose id is an object', { jsonrpc: '2.0', id: {}, method: 'tools/call', params: { ...call, _meta: envelope } }],
  ['a posted result that also claims the envelope', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: envelope }, result: {} }],
  ['a posted error that also claims the envelope', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: envelope }, error: { code: -1, message: 'x' } }],
  ['initialize with a legacy claim', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' }, _meta: { [KEY]: '2025-11-25' } } }],
  ['initialize with an incomplete modern claim', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' }, _meta: { [KEY]: '2026-07-28' } } }],
  ['a legacy initialize', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }],
  ['a legacy tools/call', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }],
  ['a legacy tools/call with _meta but no claim', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: { progressToken: 1 } } }],
  ['a legacy notification', { jsonrpc: '2.0', method: 'notifications/initialized' }],
  ['a posted result', { jsonrpc: '2.0', id: 1, result: {} }],
  ['_meta that is an array', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: [KEY] } }],
  ['params that are an array', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [{ _meta: envelope }] }],
  ['a batch with a modern element', [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }]],
  ['a legacy batch', [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]],
  ['a string', 'tools/call'],
  ['null', null],
];
const headers: Array<string | undefined> = [undefined, '2026-07-28', '2025-11-25', ' 2026-07-28 '];

const sdkSaysLegacy = (body: unknown, header: string | undefined): boolean =>
  classifyInboundRequest({ httpMethod: 'POST', ...(header !== undefined ? { protocolVersionHeader: header } : {}), body }).kind === 'legacy';

describe('the era of a POST to /mcp', () => {
  it.each(bodies)('routes %s as the SDK classifies it, with every version header', (_name, body) => {
    for (const header of headers) expect({ header, legacy: isLegacyPost(body, header) }).toEqual({ header, legacy: sdkSaysLegacy(body, header) });
  });

  it('takes a body-less POST as legacy, as isLegacyRequest does', () => {
    expect(isLegacyPost(undefined, '2026-07-28')).toBe(true);
  });
});
