import { Agent } from 'undici';

/** One pooled undici Agent for every outbound HTTP call of a gateway (webhooks, retrieval services). */
export function createHttpAgent(): Agent {
  return new Agent({ connections: 128, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 });
}

/** Reads at most `maxBytes` of a body; refuses more so a hostile upstream cannot exhaust memory. */
async function readBytesCapped(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new Error(`upstream response exceeds ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** `readBytesCapped` decoded as UTF-8. */
export async function readBodyCapped(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string> {
  return (await readBytesCapped(body, maxBytes)).toString('utf8');
}
