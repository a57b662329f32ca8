// The guardrails benchmark's tool (bench/results.md, issue 50): a 2 KiB JSON result of the kind a listing
// tool answers — ids, names, URLs, prices, dates — with nothing a detector should find.
const items = Array.from({ length: 16 }, (_, i) => ({
  id: 1000 + i,
  name: `Item number ${i}`,
  url: `https://shop.example.com/items/${1000 + i}`,
  price: 12.5 + i,
  updated: `2026-12-0${(i % 9) + 1}T10:00:00Z`,
}));
const result = { items: items.filter((_, i) => JSON.stringify(items.slice(0, i + 1)).length <= 2000), next: null };

export default [
  {
    name: 'result_2k',
    description: 'A 2 KiB JSON listing',
    inputSchema: { type: 'object', properties: {} },
    readOnly: true,
    handler: () => result,
  },
];
