// getting-started's per-user OAuth walkthrough run as written: the bundled mock authorization server, the
// example config, connect with curl as the browser, and the call then carries the user's token. Only the
// fixed ports (8080, 8081) become free ones, and `npm start` the built server it starts (logging to a file).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { docBlock } from '../helpers/doc-blocks.js';
import { freePort } from '../helpers/server-process.js';

const root = packageRoot();
const skipReason = existsSync(join(root, 'dist/src/server.js')) ? undefined : 'toolgate is not built (npm run build)';
if (skipReason) console.warn(`[toolgate tests] per-user OAuth walkthrough SKIPPED: ${skipReason}`);
const folder = mkdtempSync(join(tmpdir(), 'tg-oauth-walkthrough-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe.skipIf(skipReason !== undefined)('the per-user OAuth walkthrough of docs/getting-started.md', () => {
  it('runs as written: CONNECTION_REQUIRED with the link, connected through the callback, then the call runs as the user', { timeout: 90_000 }, async () => {
    const [gateway, authServer] = [await freePort(), await freePort()];
    const movePorts = (text: string) => text.replaceAll('8080', String(gateway)).replaceAll('8081', String(authServer));
    for (const name of ['per-user-oauth.yaml', 'userinfo-openapi.yaml']) {
      writeFileSync(join(folder, name), movePorts(readFileSync(join(root, 'examples/oauth', name), 'utf8')));
    }
    const block = movePorts(docBlock('docs/getting-started.md', 'per-user-oauth'))
            // Its log lines go to a file: on the shared stdout one could land between a curl's answer and its newline.
      .replace('npm start -- --config examples/oauth/per-user-oauth.yaml &', `node dist/src/server.js --config ${join(folder, 'per-user-oauth.yaml')} > ${join(folder, 'server.log')} 2>&1 &`);
    expect(block).toContain(`node dist/src/server.js --config`);
    // Its own process group, so the servers the block leaves in the background end with it.
    const { TOOLGATE_URL: _url, TOOLGATE_API_KEY: _key, TOOLGATE_CONFIG: _config, ...env } = process.env;
    const shell = spawn('bash', ['-euo', 'pipefail', '-c', block], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    shell.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    shell.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const limit = setTimeout(() => process.kill(-shell.pid!, 'SIGKILL'), 60_000);
    try {
      const [code] = (await once(shell, 'exit')) as [number | null];
      const serverLog = existsSync(join(folder, 'server.log')) ? readFileSync(join(folder, 'server.log'), 'utf8').slice(-4000) : '';
      expect(code, `${stderr}\n${stdout.slice(-2000)}\n${serverLog}`).toBe(0);
    } finally {
      clearTimeout(limit);
      try {
        process.kill(-shell.pid!, 'SIGTERM');
      } catch {
        // the group has already ended
      }
    }
    const lines = stdout.split('\n').filter((line) => line.startsWith('{') || line.startsWith('<h1>'));
    const [before, connectedPage, connections, after] = [lines.find((l) => l.includes('"idp_whoami"') && l.includes('"ok":false')), lines.find((l) => l.startsWith('<h1>')), lines.find((l) => l.startsWith('{"connections"')), lines.find((l) => l.includes('"idp_whoami"') && l.includes('"ok":true'))];
    expect(before).toContain('CONNECTION_REQUIRED');
    expect(before).toContain(`open http://localhost:${authServer}/authorize?`);
    expect(connectedPage).toBe('<h1>Connected</h1>');
    expect(JSON.parse(connections!).connections[0]).toMatchObject({ service: 'idp', connected: true });
    const result = JSON.parse(after!) as { output: string; trace: { credential: { kind: string } } };
    expect(result.output).toBe('{"sub":"johndoe"}');
    expect(result.trace.credential.kind).toBe('user');
  });
});
