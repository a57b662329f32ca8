import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiKeyDigest as sha256, newApiKey } from '../shared/api-key-digest.js';
import { validateConfigObject } from './load.js';
import type { GatewayConfig } from './types.js';

/** The package root (works from src/ under tsx/vitest and from dist/src/ after a build). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('toolgate: package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}

export interface DemoConfig {
  config: GatewayConfig;
  apiKey: string;
  /** True when the key was generated (it is printed once at start-up). */
  generated: boolean;
  /** The global operator's key (reload, every upstream); from TOOLGATE_DEV_OPERATOR_KEY or generated. */
  operatorKey: string;
  operatorKeyGenerated: boolean;
  /** The demo tenant's approver (decides send_announcement calls); from TOOLGATE_DEV_APPROVER_KEY or generated. */
  approverKey: string;
  approverKeyGenerated: boolean;
}

function keyFrom(value: string | undefined, prefix: string): { key: string; generated: boolean } {
  return value && value.length > 0 ? { key: value, generated: false } : { key: newApiKey(prefix), generated: true };
}

/**
 * The one line that sets the variables every example of the README and docs/ uses. A generated key is
 * shown (the banner prints it once anyway); a key chosen through the environment is named by its variable,
 * never echoed, with `:?` so a shell where that variable is empty stops with its name instead of exporting ''.
 */
export function demoExports(demo: DemoConfig, port: number): string {
  const key = (value: string, generated: boolean, variable: string) =>
    generated ? value : `"\${${variable}:?set ${variable} in this shell too}"`;
  return [
    'export',
    `TOOLGATE_URL=http://localhost:${port}`,
    `TOOLGATE_API_KEY=${key(demo.apiKey, demo.generated, 'TOOLGATE_DEV_API_KEY')}`,
    `TOOLGATE_APPROVER_KEY=${key(demo.approverKey, demo.approverKeyGenerated, 'TOOLGATE_DEV_APPROVER_KEY')}`,
    `TOOLGATE_OPERATOR_KEY=${key(demo.operatorKey, demo.operatorKeyGenerated, 'TOOLGATE_DEV_OPERATOR_KEY')}`,
  ].join(' ');
}

/**
 * What `npm start` prints once the demo listens: each of the three keys (its value when generated, the
 * variable it came from otherwise), where the console is, and the export line of the examples.
 */
export function demoBanner(demo: DemoConfig, port: number): string {
  const key = (value: string, generated: boolean, variable: string) =>
    generated ? `${value}  (generated, printed once; set ${variable} to choose one)` : `the value of $${variable}`;
  return [
    `toolgate demo: tenant "demo" on http://localhost:${port}`,
    `  API key       (user demo-user: tenant admin, may run every demo tool): ${key(demo.apiKey, demo.generated, 'TOOLGATE_DEV_API_KEY')}`,
    `  approver key  (user demo-approver: decides send_announcement calls):  ${key(demo.approverKey, demo.approverKeyGenerated, 'TOOLGATE_DEV_APPROVER_KEY')}`,
    `  operator key  (reload and the other gateway-wide admin routes):       ${key(demo.operatorKey, demo.operatorKeyGenerated, 'TOOLGATE_DEV_OPERATOR_KEY')}`,
    `console: http://localhost:${port}/console/ (sign in with one of these keys)`,
    'for the examples of the README and docs/:',
    `  ${demoExports(demo, port)}`,
    '  try: curl -H "Authorization: Bearer $TOOLGATE_API_KEY" "$TOOLGATE_URL/v1/tools"',
  ].join('\n');
}

/**
 * The embedded demo: one process, in-memory store, tenant `demo` with a few example function tools.
 * The API key comes from TOOLGATE_DEV_API_KEY (the operator key from TOOLGATE_DEV_OPERATOR_KEY) or is
 * generated; only SHA-256 digests are kept in config.
 */
export function demoConfig(env: NodeJS.ProcessEnv = process.env): DemoConfig {
  const { key: apiKey, generated } = keyFrom(env.TOOLGATE_DEV_API_KEY, 'tg_demo_');
  // The demo key is the demo tenant's admin; gateway-wide operations take the operator key.
  const operator = keyFrom(env.TOOLGATE_DEV_OPERATOR_KEY, 'tg_operator_');
  // A second person of tenant demo: the requester of an approval can never decide it.
  const approver = keyFrom(env.TOOLGATE_DEV_APPROVER_KEY, 'tg_approver_');
  // A second demo tenant only when its key is chosen, so the RAG isolation demo takes two curl commands.
  const demo2Key = env.TOOLGATE_DEV_API_KEY_DEMO2;
  const demo2 = demo2Key && demo2Key.length > 0
    ? [{ id: 'demo2', sha256: sha256(demo2Key), tenant: 'demo2', user: 'demo2-user', roles: [] }]
    : [];
  const raw = {
    // Loopback unless HOST says otherwise: the banner prints an operator key, and the demo is for this machine.
    server: { host: env.HOST || '127.0.0.1', port: 8080 },
    auth: {
      apiKeys: [
        { id: 'demo', sha256: sha256(apiKey), tenant: 'demo', user: 'demo-user', roles: ['admin', 'approver'] },
        { id: 'operator', sha256: sha256(operator.key), tenant: 'demo', user: 'operator', roles: [] },
        { id: 'approver', sha256: sha256(approver.key), tenant: 'demo', user: 'demo-approver', roles: ['approver'] },
        ...demo2,
      ],
      operators: [{ apiKey: 'operator' }],
    },
    store: { kind: 'memory' },
    audit: { sink: 'off' },
    functions: [{ module: './examples/functions/demo-tools.mjs' }],
    // An MCP upstream in the demo: a tiny MCP server of this repository, run in-process (its tools are calc_<tool>).
    mcp: { local: [{ service: 'calc', module: './examples/mcp/calc.mjs' }] },
    // Two tenants share examples/kb.jsonl; the filter is bound from the caller's token, never from the model.
    rag: [
      {
        name: 'knowledge_search',
        description: 'Search the company handbook. Returns numbered passages [S1], [S2]… with their sources.',
        dataset: 'demo-handbook',
        backend: { kind: 'embedded', documents: './examples/kb.jsonl' },
        topK: { default: 5, max: 10 },
        filter: { tenant: '${principal.tenant}' },
      },
    ],
    tenants: {
      demo: {
        tools: { allow: ['*'], deny: [] },
        policies: { approval: { tools: ['send_announcement'], expiresMs: 900_000 } },
        // A named subset of the pool, mixing a function tool and the MCP upstream's: ?toolset=desk, /mcp/desk.
        toolsets: { desk: { description: 'Weather and sums', tools: ['get_weather', 'calc_*'] } },
      },
      ...(demo2.length > 0 ? { demo2: { tools: { allow: ['*'], deny: [] } } } : {}),
    },
    // The console polls every few seconds: its reads would push the banner's keys out of sight.
    logging: { level: env.LOG_LEVEL ?? 'info', quietReads: true },
    console: { enabled: true },
  };
  const config = validateConfigObject(raw, packageRoot(), undefined);
  return {
    config,
    apiKey,
    generated,
    operatorKey: operator.key,
    operatorKeyGenerated: operator.generated,
    approverKey: approver.key,
    approverKeyGenerated: approver.generated,
  };
}
