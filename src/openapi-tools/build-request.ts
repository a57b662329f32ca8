// Arguments + plan → the outgoing request. Values are encoded per parameter style (the common
// OpenAPI subset: simple path/header values, form and deepObject query values); a path value can
// never add or climb path segments.
import { ToolError } from '../call/tool-error.js';
import type { JsonObject } from '../call/types.js';
import { isObject } from './document.js';
import type { ParameterPlan, RequestPlan } from './request-plan.js';

export interface OutgoingRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

const scalar = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

function pathValue(parameter: ParameterPlan, value: unknown): string {
  if (parameter.json) return encodeURIComponent(JSON.stringify(value));
  const text = Array.isArray(value)
    ? value.map((item) => encodeURIComponent(scalar(item))).join(',')
    : isObject(value)
      ? Object.entries(value).map(([key, item]) => `${encodeURIComponent(key)}${parameter.explode ? '=' : ','}${encodeURIComponent(scalar(item))}`).join(',')
      : encodeURIComponent(scalar(value));
  // encodeURIComponent keeps "." and URL parsing treats "."/".." (even as %2e) as dot segments:
  // such a value would move the request to another path of the API.
  if (text === '' || /^(?:\.|%2e){1,2}$/i.test(text)) {
    throw new ToolError('VALIDATION_ERROR', `path parameter "${parameter.key}" must not be empty, "." or ".."`);
  }
  return text;
}

function appendQuery(query: URLSearchParams, parameter: ParameterPlan, value: unknown, queryNames: ReadonlySet<string>): void {
  if (parameter.json) return query.append(parameter.name, JSON.stringify(value));
  if (Array.isArray(value)) {
    if (parameter.explode) for (const item of value) query.append(parameter.name, scalar(item));
    else query.append(parameter.name, value.map(scalar).join(parameter.style === 'pipeDelimited' ? '|' : parameter.style === 'spaceDelimited' ? ' ' : ','));
    return;
  }
  if (isObject(value)) {
    if (parameter.style === 'deepObject') for (const [key, item] of Object.entries(value)) query.append(`${parameter.name}[${key}]`, scalar(item));
    else if (parameter.explode) {
      // Exploded keys become query names: one naming another parameter would add a second value for
      // it, overriding a value the gateway binds (tenant bindings hide that parameter from the model).
      for (const key of Object.keys(value)) {
        if (queryNames.has(key)) throw new ToolError('VALIDATION_ERROR', `query parameter "${parameter.key}" must not hold the key "${key}" of another query parameter`);
      }
      for (const [key, item] of Object.entries(value)) query.append(key, scalar(item));
    }
    else query.append(parameter.name, Object.entries(value).flatMap(([key, item]) => [key, scalar(item)]).join(','));
    return;
  }
  query.append(parameter.name, scalar(value));
}

function headerValue(parameter: ParameterPlan, value: unknown): string {
  const text = parameter.json ? JSON.stringify(value) : Array.isArray(value) ? value.map(scalar).join(',') : scalar(value);
  // A CR/LF would split the header; HTTP carries only tab, visible ASCII, space and bytes 0x80–0xFF
  // (node:http's own rule), so anything else is the caller's to fix, refused before a request exists.
  if (/[^\t\x20-\x7e\x80-\xff]/.test(text)) throw new ToolError('VALIDATION_ERROR', `header parameter "${parameter.key}" holds characters an HTTP header cannot carry`);
  return text;
}

/**
 * `fixedHeaders` are the entry's configured headers plus the gateway's own: set last, so a header
 * parameter can never replace the service's credentials.
 */
export function buildRequest(baseUrl: string, plan: RequestPlan, args: JsonObject, fixedHeaders: Record<string, string>): OutgoingRequest {
  let path = plan.pathTemplate;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  const queryNames = new Set(plan.parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name));
  for (const parameter of plan.parameters) {
    if (!Object.hasOwn(args, parameter.key)) continue;
    const value = args[parameter.key];
    if (value === undefined || value === null) continue;
    if (parameter.in === 'path') path = path.split(`{${parameter.name}}`).join(pathValue(parameter, value));
    else if (parameter.in === 'query') appendQuery(query, parameter, value, queryNames);
    else headers[parameter.name.toLowerCase()] = headerValue(parameter, value);
  }
  const search = query.toString();
  const request: OutgoingRequest = {
    url: `${baseUrl.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}${search ? `?${search}` : ''}`,
    method: plan.method.toUpperCase(),
    headers: { ...headers, ...fixedHeaders },
  };
  const body = plan.body && Object.hasOwn(args, plan.body.key) ? args[plan.body.key] : undefined;
  if (plan.body && body !== undefined) {
    request.body = plan.body.kind === 'json' ? JSON.stringify(body) : scalar(body);
    request.headers['content-type'] = plan.body.mediaType;
  }
  return request;
}
