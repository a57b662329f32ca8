// The guardrails benchmark's tool (bench/results.md, issue 50): a 2 KiB JSON result of the kind a listing
// tool answers — ids, names, URLs, prices, dates — with nothing a detector should find. Every call answers a
// different text (a call counter in the sequence number, ids, names, URLs, prices and dates), so a cache of
// texts found clean cannot help: each call pays the whole scan, as a real listing tool's calls would.
// Fixed-width fields keep the length the same from call to call (1,9xx characters).

/** The listing of call `n`: 16 items at most, cut to the ones that fit in 2,000 characters. */
function listing(n, count) {
  const base = 100_000 + ((n * 16) % 800_000);
  const items = Array.from({ length: count }, (_, i) => ({
    id: base + i,
    name: `Item number ${String((n + i) % 1000).padStart(3, '0')}`,
    url: `https://shop.example.com/items/${base + i}`,
    price: (1005 + ((n * 37 + i * 11) % 8990)) / 100,
    updated: `2026-12-0${((n + i) % 9) + 1}T10:${String(n % 60).padStart(2, '0')}:${String((n + i) % 60).padStart(2, '0')}Z`,
  }));
  return { seq: 100_000 + (n % 900_000), items, next: null };
}

// The number of items is fixed once, from the first call's text (every call's text is as long).
let count = 16;
while (JSON.stringify(listing(0, count)).length > 2000) count -= 1;
let calls = 0;

export default [
  {
    name: 'result_2k',
    description: 'A 2 KiB JSON listing, different on every call',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    handler: () => listing(calls++, count),
  },
];
