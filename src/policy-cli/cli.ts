// `toolgate policy test <tenant|file.cedar> --cases x.yaml` and `toolgate policy schema <tenant>`
// (docs/governance.md#toolgate-policy-test): a tenant's Cedar policies checked in CI without a running gateway.
// Exit 0 every case passed, 1 a case failed, 64 a wrong command line, 78 a config or policy error.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { CedarConfig } from '../config/types.js';
import type { Tool } from '../call/types.js';
import { CaseFileError, declaredTools, parseCaseFile, report, runCases } from './cases.js';
import type { CedarEngine } from '../cedar/engine.js';
import { loadCedarEngine } from '../cedar/load.js';
import { loadCedar } from '../cedar/wasm.js';

export const POLICY_USAGE = `usage:
  toolgate policy test TENANT --cases CASES.yaml [--config FILE]   run a tenant's Cedar policies against a case file
  toolgate policy test POLICIES.cedar --cases CASES.yaml           the same for a policy file (tools, claims from the case file)
  toolgate policy schema TENANT [--config FILE]                    print the tenant's generated Cedar schema`;

export class PolicyUsageError extends Error {}
/** A config, policy or case-file error: exit 78. */
export class PolicyConfigError extends Error {}

/** What a tenant looks like once its config is built (the gateway's catalog and the tenant's engine). */
export interface TenantPolicies {
  engine: CedarEngine;
  tools: readonly Tool[];
}

/** Builds the config's gateway unserved and hands back a tenant's engine and catalog (src/cli.ts supplies it: only it may build the app). */
export type TenantLoader = (config: string | undefined, tenant: string) => Promise<TenantPolicies>;

export interface PolicyCliResult {
  stdout: string;
  exitCode: number;
}

export async function runPolicyCli(args: string[], env: NodeJS.ProcessEnv, loadTenant: TenantLoader): Promise<PolicyCliResult> {
  const [command, ...rest] = args;
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { cases: { type: 'string' }, config: { type: 'string', short: 'c' } }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new PolicyUsageError(`${(error as Error).message}\n${POLICY_USAGE}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new PolicyUsageError(`policy ${command ?? ''} takes one tenant or file\n${POLICY_USAGE}`);
  const target = positionals[0]!;
  const configPath = values.config ?? (env.TOOLGATE_CONFIG || undefined);
  if (command === 'schema') {
    const { engine } = await loadTenant(configPath, target);
    const cedar = await loadCedar();
    const text = cedar.schemaToText(engine.schema);
    return { stdout: text.type === 'success' ? `${text.text}\n` : `${JSON.stringify(engine.schema, null, 2)}\n`, exitCode: 0 };
  }
  if (command !== 'test') throw new PolicyUsageError(`unknown policy command ${JSON.stringify(command ?? '')}\n${POLICY_USAGE}`);
  if (values.cases === undefined) throw new PolicyUsageError(`policy test needs --cases FILE\n${POLICY_USAGE}`);
  let file;
  try {
    file = parseCaseFile(await readFile(values.cases, 'utf8'));
  } catch (error) {
    if (error instanceof CaseFileError) throw new PolicyConfigError(`${values.cases}: ${error.message}`);
    throw new PolicyConfigError(`${values.cases} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const fromFile = target.endsWith('.cedar');
  let tenant: TenantPolicies;
  if (fromFile) {
    const tools = declaredTools(file);
    const config = { files: [resolve(target)], claims: file.claims ?? {}, default: file.default ?? 'deny' } as CedarConfig;
    const engine = await loadCedarEngine({ tenant: 'policy-test', config, tools, baseDir: dirname(resolve(target)) }).catch((error: unknown) => {
      throw new PolicyConfigError(`${target}: ${(error as Error).message.split('\n', 1)[0]}`);
    });
    tenant = { engine, tools };
  } else tenant = await loadTenant(configPath, target);
  const byName = new Map(tenant.tools.map((tool) => [tool.name, tool]));
  const results = runCases(tenant.engine, file, fromFile ? 'policy-test' : target, (name) => byName.get(name));
  return { stdout: report(results), exitCode: results.every((result) => result.passed) ? 0 : 1 };
}
