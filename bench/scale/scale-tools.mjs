// Function tools for `npm run test:scale`: a fast one, a slow one (keeps requests in flight while
// replicas are stopped), one counted by the rate limit, one that needs human approval. None is named
// `echo`: that is the pinned MCP upstream's tool, and a function tool of the same name would shadow it.
const wait = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    });
  });

const text = { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false };

export default [
  { name: 'say', description: 'Says the text back', inputSchema: text, readOnly: true, handler: ({ text }) => ({ said: text ?? '' }) },
  {
    name: 'slow',
    description: 'Answers after ms milliseconds',
    inputSchema: { type: 'object', properties: { ms: { type: 'integer', minimum: 0, maximum: 1000 } }, additionalProperties: false },
    readOnly: true,
    handler: async ({ ms }, ctx) => {
      await wait(ms ?? 30, ctx.signal);
      return 'done';
    },
  },
  { name: 'limited', description: 'Counted by the rate limit', inputSchema: text, handler: () => 'counted' },
  { name: 'ticket', description: 'Needs human approval', inputSchema: text, handler: ({ text }) => `ticket created: ${text ?? ''}` },
];
