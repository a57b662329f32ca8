// The console is only a client of the API: every rule is enforced by the server again.
// The bearer lives in sessionStorage (gone with the tab), is sent only as an Authorization header and
// never in a URL or localStorage.
import type { components, operations } from './generated/openapi.js';

const TOKEN_KEY = 'toolgate.token';

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiAnswer<T> {
  status: number;
  body: T;
  etag: string | null;
}

/** One API request with the session's bearer; a 4xx/5xx answer becomes an ApiError carrying the server's message. */
export async function api<T>(
  method: string,
  path: string,
  options: { body?: unknown; yaml?: string; etag?: string | null; ifMatch?: string | null; createOnly?: boolean; signal?: AbortSignal } = {},
): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = session.token();
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  // A YAML text as typed (the tenant API parses it as the configuration file is parsed).
  if (options.yaml !== undefined) headers['content-type'] = 'application/yaml';
  if (options.etag) headers['if-none-match'] = options.etag;
  // Conditional writes (the tenant API): only that version, or only when nothing exists yet.
  if (options.ifMatch) headers['if-match'] = options.ifMatch;
  if (options.createOnly) headers['if-none-match'] = '*';
  const response = await fetch(path, {
    method,
    headers,
    body: options.yaml ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
    signal: options.signal,
  });
  const text = await response.text();
  let body: unknown = null;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (response.status >= 400) {
    const error = body as { code?: unknown; message?: unknown } | null;
    // A revoked or expired bearer: the shell signs out (main.tsx) and says why.
    if (response.status === 401 && path !== '/v1/me') dispatchEvent(new CustomEvent('toolgate:unauthenticated', { detail: `Signed out: ${typeof error?.message === 'string' ? error.message : 'token refused'}` }));
    throw new ApiError(response.status, typeof error?.code === 'string' ? error.code : 'HTTP_' + response.status, typeof error?.message === 'string' ? error.message : response.statusText);
  }
  return { status: response.status, body: body as T, etag: response.headers.get('etag') };
}

// Response types generated from openapi.yaml (scripts/console-api-types.ts): the server's schemas are the one source.
/** The 200 body of an operation of openapi.yaml, by its operationId. */
export type ApiBody<Operation extends keyof operations> = operations[Operation] extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;

export type Me = ApiBody<'getMe'>;
export type ToolResult = components['schemas']['ToolResult'];
export type Approval = ApiBody<'getApproval'>;
/** An approval as a listing shows it: large arguments are replaced by their size, SHA-256 and a preview. */
export type ListedApproval = ApiBody<'listApprovals'>['approvals'][number];
export type ApprovalList = ApiBody<'listApprovals'>;

/** A tool of `GET /v1/tools?format=native` (the listing's schema depends on `format`, so it is not typed per entry there). */
export interface ToolEntry {
  name: string;
  description: string;
  inputSchema?: JsonSchema;
  source: string;
  readOnly: boolean;
  destructive: boolean;
  aliases?: string[];
  deferLoading?: boolean;
  searchHint?: string;
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  [key: string]: unknown;
}

export const isAdmin = (me: Me): boolean => me.roles.includes('admin');
export const isApprover = (me: Me): boolean => me.roles.includes('admin') || me.roles.includes('approver');
