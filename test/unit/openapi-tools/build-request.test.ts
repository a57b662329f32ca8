import { describe, expect, it } from 'vitest';
import { buildRequest } from '../../../src/openapi-tools/build-request.js';
import type { ParameterPlan, RequestPlan } from '../../../src/openapi-tools/request-plan.js';

const parameter = (overrides: Partial<ParameterPlan>): ParameterPlan => ({ key: 'p', in: 'query', name: 'p', style: 'form', explode: true, json: false, ...overrides });
const plan = (parameters: ParameterPlan[], extra: Partial<RequestPlan> = {}): RequestPlan => ({ method: 'get', pathTemplate: '/items/{id}', parameters, ...extra });
const idParameter = parameter({ key: 'id', in: 'path', name: 'id', style: 'simple', explode: false });

describe('building the outgoing request', () => {
  it('encodes path values whole, so "/", "?" and "#" stay inside the segment', () => {
    expect(buildRequest('https://api.test/v1/', plan([idParameter]), { id: 'a/b?c#d' }, {}).url).toBe('https://api.test/v1/items/a%2Fb%3Fc%23d');
  });

  it('refuses an empty, "." or ".." path value', () => {
    for (const id of ['', '.', '..']) expect(() => buildRequest('https://api.test', plan([idParameter]), { id }, {})).toThrow(/must not be empty/);
  });

  it('serialises query arrays and objects by style', () => {
    const request = buildRequest(
      'https://api.test',
      plan([
        idParameter,
        parameter({ key: 'tags', name: 'tags', explode: false }),
        parameter({ key: 'filter', name: 'filter', style: 'deepObject' }),
        parameter({ key: 'q', name: 'q', json: true }),
      ]),
      { id: 1, tags: ['a', 'b'], filter: { state: 'open' }, q: { x: 1 } },
      {},
    );
    expect(request.url).toBe('https://api.test/items/1?tags=a%2Cb&filter%5Bstate%5D=open&q=%7B%22x%22%3A1%7D');
  });

  it('refuses an exploded query object whose key names another query parameter (a bound one must not get a second value)', () => {
    const owner = parameter({ key: 'owner', name: 'owner' });
    const filter = parameter({ key: 'filter', name: 'filter' });
    expect(buildRequest('https://api.test', plan([idParameter, owner, filter]), { id: 1, owner: 'acme', filter: { state: 'open' } }, {}).url).toBe('https://api.test/items/1?owner=acme&state=open');
    expect(() => buildRequest('https://api.test', plan([idParameter, owner, filter]), { id: 1, owner: 'acme', filter: { owner: 'victim' } }, {})).toThrow(/another query parameter/);
  });

  it('lets configured headers win over a header parameter and refuses CR/LF and characters HTTP cannot carry in header values', () => {
    const auth = parameter({ key: 'X-Key', in: 'header', name: 'X-Key', style: 'simple', explode: false });
    expect(buildRequest('https://api.test', plan([idParameter, auth]), { id: 1, 'X-Key': 'model' }, { 'x-key': 'service' }).headers).toEqual({ 'x-key': 'service' });
    expect(() => buildRequest('https://api.test', plan([idParameter, auth]), { id: 1, 'X-Key': 'a\r\nInjected: 1' }, {})).toThrow(/an HTTP header cannot carry/);
    // Beyond one byte per character: refused here, as the caller's error, before any request exists.
    expect(() => buildRequest('https://api.test', plan([idParameter, auth]), { id: 1, 'X-Key': 'é\u2028' }, {})).toThrow(/an HTTP header cannot carry/);
    expect(buildRequest('https://api.test', plan([idParameter, auth]), { id: 1, 'X-Key': 'café\tx' }, {}).headers).toEqual({ 'x-key': 'café\tx' });
  });

  it('sends the JSON body with its media type', () => {
    const request = buildRequest('https://api.test', plan([idParameter], { method: 'post', body: { key: 'body', mediaType: 'application/vnd.api+json', kind: 'json' } }), { id: 2, body: { a: 1 } }, {});
    expect(request).toMatchObject({ method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/vnd.api+json' } });
  });
});
