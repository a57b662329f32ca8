// Every domain error maps to a row of the TG_* table (src/errors.ts) in one place: gatewayErrorOf. A new
// error class in src/ either is a DomainError listed here with a sample, or is named below as one that never
// ends a request; a class that is neither fails this test.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RuntimeKeyError } from '../../src/admin/api-keys.js';
import { BadCursorError } from '../../src/approvals/page.js';
import { APPROVAL_ERROR_CODES, ApprovalError, type ApprovalErrorCode } from '../../src/approvals/types.js';
import { AuthenticationError } from '../../src/auth/authenticator.js';
import { ConfigError } from '../../src/config/interpolate.js';
import { DomainError, errors, gatewayErrorOf, type ErrorCode } from '../../src/errors.js';
import { UnknownTenantError } from '../../src/snapshot/caller-pools.js';
import { SessionSignalsLimited } from '../../src/mcp/server/post-bounds.js';
import { CatalogNotFound, CatalogRateLimited, CatalogUpstreamError } from '../../src/catalog/resource-catalog-errors.js';
import { TraceSettingsError } from '../../src/observability/trace-settings.js';
import { TaskError } from '../../src/tasks/types.js';
import { TenantApiError } from '../../src/tenants/errors.js';
import { AuthServerError } from '../../src/upstream-auth/auth-server-error.js';
import { FlowError } from '../../src/upstream-auth/connections.js';

/** Each domain error class, with samples covering each of its own sub-codes, and the TG_* code each must map to. */
const DOMAIN_ERRORS: Record<string, Array<[DomainError, ErrorCode]>> = {
  UnknownTenantError: [[new UnknownTenantError('acme'), 'TG_UNKNOWN_TENANT']],
  CatalogNotFound: [[new CatalogNotFound('no such resource'), 'TG_NOT_FOUND']],
  CatalogUpstreamError: [[new CatalogUpstreamError('notes did not answer'), 'TG_UPSTREAM_ERROR']],
  CatalogRateLimited: [[new CatalogRateLimited('over the limit', 1500), 'TG_RATE_LIMITED']],
  AuthServerError: [[new AuthServerError('unavailable', 'token endpoint down'), 'TG_UPSTREAM_ERROR']],
  FlowError: [
    [new FlowError('exchange_failed', 'the exchange failed'), 'TG_UPSTREAM_ERROR'],
    [new FlowError('invalid_state', 'unknown state'), 'TG_BAD_REQUEST'],
    [new FlowError('expired', 'expired'), 'TG_BAD_REQUEST'],
    [new FlowError('denied', 'denied'), 'TG_BAD_REQUEST'],
  ],
  AuthenticationError: [[new AuthenticationError('token expired'), 'TG_UNAUTHENTICATED']],
  ConfigError: [[new ConfigError('tenants.acme.tools: bad key'), 'TG_CONFIG_INVALID']],
  TraceSettingsError: [[new TraceSettingsError('OTEL_TRACES_SAMPLER_ARG: not a number'), 'TG_CONFIG_INVALID']],
  RuntimeKeyError: [
    [new RuntimeKeyError('NOT_FOUND', 'no such key'), 'TG_NOT_FOUND'],
    [new RuntimeKeyError('FORBIDDEN', 'not yours'), 'TG_FORBIDDEN'],
    [new RuntimeKeyError('LIMIT', 'too many keys'), 'TG_CONFLICT'],
  ],
  TenantApiError: [
    [new TenantApiError('NOT_FOUND', 'no such tenant'), 'TG_NOT_FOUND'],
    [new TenantApiError('FORBIDDEN', 'may only narrow'), 'TG_FORBIDDEN'],
    [new TenantApiError('CONFLICT', 'defined in the file'), 'TG_CONFLICT'],
    [new TenantApiError('PRECONDITION_FAILED', 'changed meanwhile'), 'TG_PRECONDITION_FAILED'],
  ],
  TaskError: [
    [new TaskError('NOT_FOUND', 'task not found'), 'TG_NOT_FOUND'],
    [new TaskError('LIMIT', 'too many tasks'), 'TG_OVERLOADED'],
    [new TaskError('TERMINAL', 'task is already completed'), 'TG_CONFLICT'],
  ],
  ApprovalError: (Object.keys(APPROVAL_ERROR_CODES) as ApprovalErrorCode[]).map((code) => [new ApprovalError(code, `refused: ${code}`), APPROVAL_ERROR_CODES[code]]),
  BadCursorError: [[new BadCursorError(), 'TG_BAD_REQUEST']],
  SessionSignalsLimited: [[new SessionSignalsLimited(600, 60_000, 1500), 'TG_RATE_LIMITED']],
};

/** Error classes that never end a request themselves, and why (each is turned into something else first). */
const NOT_REQUEST_LEVEL: Record<string, string> = {
  ToolError: 'a tool-level failure: a ToolResult with its errorType',
  NotFoundError: 'a ToolError of the workspace built-ins',
  NotADirectoryError: 'a ToolError of the workspace built-ins',
  NotConnectedError: 'answered as the tool error CONNECTION_REQUIRED',
  VaultError: 'a sealed value that no longer opens: the connection counts as absent',
  ResponseTooLargeError: 'an executor failure: the call answers a ToolResult',
  EgressDeniedError: 'an executor failure: the call answers a ToolResult',
  RequestNotSentError: 'an executor failure: the call answers a ToolResult',
  OpenApiDocumentError: 'a config (re)load failure, reported as a ConfigError',
  MatchBudgetError: 'a pattern over its budget: a refused match inside validation or a glob',
  PatternRefusedError: 'a schema pattern refused: a VALIDATION_ERROR of the call',
  GlobSyntaxError: 'a bad glob: reported by the config check',
  NotStrict: 'internal to the strict-schema conversion',
  MissingValue: 'internal to binding resolution: the call fails closed',
  TooLarge: 'internal to the authorization-server client: an AuthServerError',
  FunctionModuleError: 'a function module that does not load: a config error at load',
  UsageError: 'the command line, never a request',
  AuditUsageError: 'the audit command line (toolgate audit), never a request',
  RequestStateRefused: 'a sealed MCP requestState that does not open: refused on the MCP wire',
  CheckFailed: 'the `toolgate check` command, never a request',
  RelayRefused: "an upstream's elicitation or sampling request refused: the upstream hears a JSON-RPC error",
  PolicyTextError: 'a Cedar policy text past its bounds: a config error at load, naming the tenant',
  GuardrailConfigError: 'a bad guardrails rule or detector: a config error at load, naming the key',
  SelectorError: 'a bad guardrails JSONPath selector: a config error at load, naming the key',
  CaseFileError: 'a bad case file of `toolgate policy test`, never a request',
  PolicyUsageError: 'the `toolgate policy` command line, never a request',
  PolicyConfigError: 'a config or policy error of `toolgate policy`, never a request',
  JsonRpcError: 'the MCP wire form of a domain error (src/mcp/server/wire-error.ts)',
};

const srcRoot = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** Every `class X extends Y` in src/, as X → Y. */
function classParents(): Map<string, string> {
  const parents = new Map<string, string>();
  for (const file of sourceFiles(srcRoot)) {
    for (const match of readFileSync(file, 'utf8').matchAll(/\bclass (\w+) extends (\w+)/g)) parents.set(match[1]!, match[2]!);
  }
  return parents;
}

function extendsFrom(name: string, base: string, parents: Map<string, string>): boolean {
  for (let current: string | undefined = name, hops = 0; current !== undefined && hops < 10; current = parents.get(current), hops++) {
    if (current === base) return true;
  }
  return false;
}

describe('the domain error mapping', () => {
  it('maps every listed domain error to an existing TG_* code, with that code\'s status', () => {
    for (const [name, samples] of Object.entries(DOMAIN_ERRORS)) {
      for (const [error, code] of samples) {
        expect(error, name).toBeInstanceOf(DomainError);
        const mapped = gatewayErrorOf(error);
        expect(mapped?.code, name).toBe(code);
        expect(Object.keys(errors), name).toContain(mapped?.code);
        expect(mapped?.statusCode, name).toBe(new errors[code]().statusCode);
        expect(mapped?.message, name).not.toBe('%s');
      }
    }
  });

  it('keeps what the caller must not read out of the mapped message, and the wait of a rate limit', () => {
    expect(gatewayErrorOf(new UnknownTenantError('tenant globex'))?.message).toBe('tenant is not configured');
    expect(gatewayErrorOf(new CatalogNotFound('no such resource'))?.message).toBe('no such resource');
    expect(new CatalogRateLimited('over the limit', 1500).retryAfterMs).toBe(1500);
    expect(gatewayErrorOf(new Error('a bug'))).toBeUndefined();
    expect(gatewayErrorOf(new errors.TG_CONFLICT('already decided'))).toBeUndefined();
  });

  it('knows every error class in src/: each is a listed domain error or named as never ending a request', () => {
    const parents = classParents();
    const errorClasses = [...parents.keys()].filter((name) => extendsFrom(name, 'Error', parents) || /Error$/.test(parents.get(name)!));
    expect(errorClasses.length).toBeGreaterThan(20);
    for (const name of errorClasses) {
      if (name === 'DomainError') continue;
      if (extendsFrom(name, 'DomainError', parents)) expect(Object.keys(DOMAIN_ERRORS), `${name} is a DomainError without a sample here`).toContain(name);
      else expect(Object.keys(NOT_REQUEST_LEVEL), `${name} is neither a DomainError nor named as never ending a request`).toContain(name);
    }
  });
});
