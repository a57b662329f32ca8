// `toolgate policy test`'s case file (docs/governance.md#toolgate-policy-test): principal, tool (or resource,
// prompt), arguments and time → the expected decision, checked against a tenant's policies. One schema for
// the file and its type.
import Type, { type Static } from 'typebox';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { defineTool } from '../registry/define-tool.js';
import type { Principal } from '../call/principal.js';
import type { Tool } from '../call/types.js';
import type { CedarDecision, CedarEngine } from '../cedar/engine.js';

const Principal = Type.Object(
  {
    user: Type.String({ minLength: 1 }),
    roles: Type.Optional(Type.Array(Type.String())),
    claims: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

const Case = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    principal: Principal,
    tool: Type.Optional(Type.String({ minLength: 1 })),
    resource: Type.Optional(Type.String({ minLength: 1 })),
    prompt: Type.Optional(Type.String({ minLength: 1 })),
    /** `call` (default) decides with the arguments; `list` asks whether the tool is listed. */
    action: Type.Optional(Type.Union([Type.Literal('call'), Type.Literal('list')])),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** ISO time of the request (default: now). */
    time: Type.Optional(Type.String({ minLength: 1 })),
    mode: Type.Optional(Type.Union([Type.Literal('default'), Type.Literal('readonly')])),
    depth: Type.Optional(Type.Integer({ minimum: 0 })),
    expect: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
    /** The determining policies expected, when given. */
    policies: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);

const ToolEntry = Type.Object(
  {
    inputSchema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    readOnly: Type.Optional(Type.Boolean()),
    destructive: Type.Optional(Type.Boolean()),
    source: Type.Optional(Type.Union([Type.Literal('function'), Type.Literal('builtin'), Type.Literal('local-mcp'), Type.Literal('global-mcp'), Type.Literal('user-mcp'), Type.Literal('rag')])),
    service: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const CaseFile = Type.Object(
  {
    /** Tools the cases use, when the policies are tested from a file without a config (name → what the catalog would say). */
    tools: Type.Optional(Type.Record(Type.String(), ToolEntry)),
    /** For a policy file: the claims exposed and the default, as `tenants.<t>.cedar` would set them. */
    claims: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Literal('String'), Type.Literal('Long'), Type.Literal('Boolean'), Type.Literal('Set<String>')]))),
    default: Type.Optional(Type.Union([Type.Literal('deny'), Type.Literal('permit')])),
    cases: Type.Array(Case, { minItems: 1, maxItems: 10_000 }),
  },
  { additionalProperties: false },
);
export type CaseFile = Static<typeof CaseFile>;
export type PolicyCase = Static<typeof Case>;

const validate = new Ajv({ allErrors: false, strict: false }).compile(CaseFile);

export class CaseFileError extends Error {}

export function parseCaseFile(text: string): CaseFile {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new CaseFileError(`the case file is not YAML: ${(error as Error).message.split('\n', 1)[0]}`);
  }
  if (!validate(raw)) {
    const error = validate.errors![0]!;
    throw new CaseFileError(`the case file ${error.instancePath || '/'} ${error.message ?? 'is invalid'}`);
  }
  return raw as CaseFile;
}

/** The tools a case file declares, made as the registry makes them (fail-closed defaults). */
export function declaredTools(file: CaseFile): Tool[] {
  return Object.entries(file.tools ?? {}).map(([name, entry]) =>
    defineTool({ name, handler: () => null, source: entry.source ?? 'function', inputSchema: entry.inputSchema ?? { type: 'object', properties: {} }, readOnly: entry.readOnly, destructive: entry.destructive, service: entry.service }),
  );
}

export interface CaseResult {
  readonly name: string;
  readonly passed: boolean;
  readonly decision: CedarDecision;
  readonly problem?: string;
}

/** Runs every case; `toolOf` finds a tool by name (the catalog's, or the file's). */
export function runCases(engine: CedarEngine, file: CaseFile, tenant: string, toolOf: (name: string) => Tool | undefined): CaseResult[] {
  return file.cases.map((entry) => {
    const principal: Principal = { tenant, user: entry.principal.user, roles: entry.principal.roles ?? [], claims: entry.principal.claims ?? {} };
    const now = entry.time === undefined ? Date.now() : Date.parse(entry.time);
    const facts = { mode: entry.mode ?? 'default', depth: entry.depth ?? 0, now };
    let decision: CedarDecision;
    if (Number.isNaN(now)) return { name: entry.name, passed: false, decision: { allowed: false, policies: [] }, problem: `time ${entry.time} is not an ISO date` };
    if (entry.resource !== undefined) decision = engine.decideResource(principal, entry.resource, facts);
    else if (entry.prompt !== undefined) decision = engine.decidePrompt(principal, entry.prompt, facts);
    else {
      const tool = entry.tool === undefined ? undefined : toolOf(entry.tool);
      if (!tool) return { name: entry.name, passed: false, decision: { allowed: false, policies: [] }, problem: `no tool ${entry.tool ?? '(none given)'}` };
      decision = entry.action === 'list' ? engine.listable(principal, tool, facts.mode) : engine.decideCall(principal, tool, entry.arguments ?? {}, facts);
    }
    const allowed = entry.expect === 'allow';
    const policiesMatch = entry.policies === undefined || [...entry.policies].sort().join('\n') === [...decision.policies].sort().join('\n');
    const passed = decision.allowed === allowed && policiesMatch;
    return { name: entry.name, passed, decision, ...(passed ? {} : { problem: `expected ${entry.expect}${entry.policies ? ` by ${entry.policies.join(', ') || 'no policy'}` : ''}` }) };
  });
}

/** One line per case, then a summary. */
export function report(results: readonly CaseResult[]): string {
  const lines = results.map((result) => {
    const got = `${result.decision.allowed ? 'allow' : 'deny'}${result.decision.policies.length > 0 ? ` by ${result.decision.policies.join(', ')}` : ''}${result.decision.error ? ` (error: ${result.decision.error})` : ''}`;
    return result.passed ? `ok    ${result.name}: ${got}` : `FAIL  ${result.name}: ${result.problem}, got ${got}`;
  });
  const failed = results.filter((result) => !result.passed).length;
  lines.push(failed === 0 ? `${results.length} cases passed` : `${failed} of ${results.length} cases failed`);
  return `${lines.join('\n')}\n`;
}
