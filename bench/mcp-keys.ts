// The credentials of the MCP bench's toolgate target (bench/mcp-targets.ts), shared with the benches that
// drive it (bench/mcp.ts, bench/ab.ts) without importing the servers. Loopback only, never a real secret.
export const BENCH_API_KEY = 'tg_bench_key';
/** The bench reads toolgate's metrics on the API port with this token (no separate metrics listener). */
export const BENCH_METRICS_TOKEN = 'tg_bench_metrics_token';
