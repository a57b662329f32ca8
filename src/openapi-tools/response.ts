// An API's answer → what the model reads: JSON as compact JSON text, text as text, anything else
// summarised (its body is not downloaded). Status ≥ 400 is UPSTREAM_ERROR (429: RATE_LIMITED) with a
// bounded excerpt and the upstream's Retry-After.
import { readBodyCapped } from '../egress/http-client.js';
import { upstreamStatusError } from '../execution/upstream-status.js';

/** The most an answer may hold before it is refused (the tool's maxResultChars cuts what the model sees). */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
const ERROR_EXCERPT_CHARS = 500;

const isJson = (type: string): boolean => type === 'application/json' || type.endsWith('+json') || type.endsWith('/json');
const isText = (type: string): boolean =>
  type.startsWith('text/') || type.endsWith('+xml') || type === 'application/xml' || type === 'application/yaml' || type === 'application/x-www-form-urlencoded';

function compactJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

async function readText(response: Response): Promise<string> {
  return response.body ? readBodyCapped(response.body, MAX_RESPONSE_BYTES) : '';
}

/** The model-readable output of a successful answer, or a ToolError for a failed one (carrying `trace`). */
export async function mapResponse(response: Response, trace: Record<string, unknown>): Promise<string> {
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (response.status >= 400) {
    const text = isJson(type) || isText(type) || type === '' ? await readText(response).catch(() => '') : (await response.body?.cancel(), `[${type} body]`);
    const excerpt = text.length > ERROR_EXCERPT_CHARS ? `${text.slice(0, ERROR_EXCERPT_CHARS)}…` : text;
    // A client error is the API's definite answer (not retried, not counted against its health);
    // 408, 425 and 429 say "try again" and 5xx "unwell".
    throw upstreamStatusError('API', response.status, excerpt && isJson(type) ? compactJson(excerpt) : excerpt, response.headers.get('retry-after'), trace);
  }
  if (response.status === 204 || response.status === 205) {
    await response.body?.cancel();
    return `HTTP ${response.status} (no content)`;
  }
  if (isJson(type)) return compactJson(await readText(response));
  if (isText(type) || type === '') return readText(response);
  await response.body?.cancel();
  const length = response.headers.get('content-length');
  return `[HTTP ${response.status} ${type} response${length ? ` of ${length} bytes` : ''}, not shown]`;
}
