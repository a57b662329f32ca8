import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is built into dist/console and served by toolgate at /console/ (routes/console.ts):
// everything is bundled from npm packages, nothing is fetched at run time, and no inline script is
// emitted (the CSP allows script only from 'self').
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
});
