/**
 * V8 flags the gateway process runs with: `npm start` (package.json), the Dockerfile's CMD and every
 * server the benchmarks start use this list; test/packaging.test.ts fails when one of them drifts.
 *
 * `--max-semi-space-size=32` (MiB; Node 20 grows it to at most 16): a call allocates about 22 KB, so at
 * 10,000 calls/s the young generation filled and was scavenged every ~75 ms (54 scavenges in 4 s of load
 * here), each one also walking what the in-flight requests hold; with 32 MiB about half as many. In
 * paired runs on the 2-core bench machine the hot path served more requests than with the default in 7
 * of 8 rounds (median +12%); a bare Fastify route did not change. The cost: up to 2 × 16 MiB more
 * young-generation memory under load.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
