#!/usr/bin/env node
// `npx toolgate …` (package.json "bin"): the compiled CLI, src/cli.ts. `npm start` and `npm run build` compile it.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/src/cli.js', import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write('toolgate: not built yet: run `npm run build` (or `npm start` once) first\n');
  process.exit(1);
}
const { main } = await import(compiled.href);
await main();
