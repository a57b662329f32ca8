// The SDK v2 client's round trip of one tools/call in process, with the two ways of reading a stdio upstream's
// lines: the SDK's ReadBuffer (deserializeMessage: JSON.parse and the JSONRPCMessage union parse) and toolgate's
// JsonLineReader (JSON.parse only; src/mcp/client/json-lines.ts). The "upstream" answers each tools/call with
// server-everything's echo line, the answers of one turn in one chunk, as a pipe delivers them. Same Client, the
// same request() with toolgate's legacy result schema, 16 in flight. CPU per call, sides alternating per round;
// `BENCH_RECEIVE_ONLY=sdk|lines` runs one side once, for instruction counts under callgrind (run it with N and
// 3N calls and divide the difference). Env: BENCH_RECEIVE_CALLS (20000), BENCH_RECEIVE_ROUNDS (8).
import { Client, ReadBuffer, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { callResultSchema } from '../src/mcp/client/direct-call.js';
import { JsonLineReader } from '../src/mcp/client/json-lines.js';
import { median } from './summary.js';

type Side = 'sdk' | 'lines';
const CALLS = Math.max(1, Number(process.env.BENCH_RECEIVE_CALLS ?? 20_000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_RECEIVE_ROUNDS ?? 8));
const CONCURRENCY = 16;

class EchoPeer implements Transport {
  onmessage?: Transport['onmessage'];
  private readonly sdk = new ReadBuffer();
  private readonly lines = new JsonLineReader();
  private pending: string[] = [];

  constructor(private readonly side: Side) {}

  async start(): Promise<void> {}
  async close(): Promise<void> {}

  send(message: JSONRPCMessage): Promise<void> {
    const request = JSON.parse(serializeMessage(message)) as { id?: number; method?: string };
    const result =
      request.method === 'initialize'
        ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'echo', version: '1' } }
        : request.method === 'tools/call'
          ? { content: [{ type: 'text', text: 'Echo: hello' }] }
          : undefined;
    if (result !== undefined && request.id !== undefined) {
      if (this.pending.length === 0) setImmediate(() => this.deliver());
      this.pending.push(`${JSON.stringify({ result, jsonrpc: '2.0', id: request.id })}\n`);
    }
    return Promise.resolve();
  }

  private deliver(): void {
    const chunk = Buffer.from(this.pending.join(''));
    this.pending = [];
    if (this.side === 'sdk') {
      this.sdk.append(chunk);
      for (let message = this.sdk.readMessage(); message !== null; message = this.sdk.readMessage()) this.onmessage?.(message);
    } else {
      this.lines.append(chunk);
      for (let line = this.lines.next(); line !== undefined; line = this.lines.next()) this.onmessage?.(line.value as JSONRPCMessage);
    }
  }
}

async function clientOf(side: Side): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
  await client.connect(new EchoPeer(side));
  return client;
}

const schema = callResultSchema('legacy');

async function run(client: Client, calls: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < calls) {
      next += 1;
      const result = await client.request({ method: 'tools/call', params: { name: 'echo', arguments: { message: 'hello' } } }, schema, { signal: new AbortController().signal, timeout: 300_000 });
      const [first] = result.content;
      if (first?.type !== 'text' || first.text !== 'Echo: hello') throw new Error('unexpected answer');
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

const only = process.env.BENCH_RECEIVE_ONLY;
if (only === 'sdk' || only === 'lines') {
  await run(await clientOf(only), CALLS);
} else {
  const clients = { sdk: await clientOf('sdk'), lines: await clientOf('lines') };
  await run(clients.sdk, CALLS);
  await run(clients.lines, CALLS);
  const micros: Record<Side, number[]> = { sdk: [], lines: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const side of round % 2 === 0 ? (['sdk', 'lines'] as const) : (['lines', 'sdk'] as const)) {
      const before = process.cpuUsage();
      await run(clients[side], CALLS);
      const used = process.cpuUsage(before);
      micros[side].push((used.user + used.system) / CALLS);
    }
  }
  const ratios = micros.lines.map((value, round) => value / micros.sdk[round]!);
  const fmt = (values: number[]): string => values.map((value) => value.toFixed(2)).join(', ');
  process.stdout.write(
    `node ${process.version}, ${ROUNDS} rounds × ${CALLS} calls a side, ${CONCURRENCY} in flight\n` +
      `CPU µs/call, ReadBuffer: ${median(micros.sdk).toFixed(2)} (${fmt(micros.sdk)})\n` +
      `CPU µs/call, JsonLineReader: ${median(micros.lines).toFixed(2)} (${fmt(micros.lines)})\n` +
      `JsonLineReader / ReadBuffer, median of per-round ratios ${median(ratios).toFixed(3)}\n`,
  );
}
