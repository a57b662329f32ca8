import { Agent } from 'undici';

/** One pooled undici Agent for every outbound HTTP call of a gateway (webhooks, retrieval services). */
export function createHttpAgent(): Agent {
  return new Agent({ connections: 128, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 });
}

/**
 * An answer larger than the gateway accepts. Often the call asked for it (a page size, an export): it is the
 * gateway's limit, not a sign the upstream is unwell, so it never counts against the upstream's circuit.
 */
export class ResponseTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`upstream response exceeds ${maxBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/** 408, 425 and 429 say "try again later"; every other 4xx is a definite answer to this request. */
const TRANSIENT_CLIENT_ERRORS = new Set([408, 425, 429]);

/**
 * An HTTP status that is the upstream's definite answer to the caller's request (a 4xx other than 408, 425
 * and 429): repeating the call changes nothing and it says nothing about the upstream's health
 * (docs/security-model.md#breaker-attribution).
 */
export const isDefiniteClientError = (status: number): boolean => status >= 400 && status < 500 && !TRANSIENT_CLIENT_ERRORS.has(status);

/** Reads at most `maxBytes` of a body; refuses more so a hostile upstream cannot exhaust memory. */
async function readBytesCapped(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new ResponseTooLargeError(maxBytes);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** `readBytesCapped` decoded as UTF-8. */
export async function readBodyCapped(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string> {
  return (await readBytesCapped(body, maxBytes)).toString('utf8');
}
