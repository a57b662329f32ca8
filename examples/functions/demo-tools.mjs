// Example function tools for the embedded demo. A module's default export is a tool spec or an array of them.
const CITY_WEATHER = {
  paris: { tempC: 18, conditions: 'cloudy' },
  tokyo: { tempC: 24, conditions: 'sunny' },
  lima: { tempC: 16, conditions: 'mist' },
};

export default [
  {
    name: 'get_weather',
    description: 'Current weather for a city (demo data).',
    inputSchema: {
      type: 'object',
      properties: { city: { type: 'string', minLength: 1, maxLength: 100 } },
      required: ['city'],
      additionalProperties: false,
    },
    readOnly: true,
    isConcurrencySafe: () => true,
    aliases: ['weather'],
    handler: ({ city }) => {
      const known = CITY_WEATHER[String(city).toLowerCase()];
      return known ? { city, ...known } : { city, tempC: 21, conditions: 'unknown (demo data)' };
    },
  },
  {
    name: 'add_numbers',
    description: 'Add a list of numbers.',
    inputSchema: {
      type: 'object',
      properties: { numbers: { type: 'array', items: { type: 'number' }, minItems: 1, maxItems: 1000 } },
      required: ['numbers'],
      additionalProperties: false,
    },
    readOnly: true,
    idempotent: true,
    isConcurrencySafe: () => true,
    handler: ({ numbers }) => ({ sum: numbers.reduce((total, n) => total + n, 0) }),
  },
  {
    name: 'echo',
    description: 'Echo a message back.',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', maxLength: 10000 } },
      required: ['message'],
      additionalProperties: false,
    },
    readOnly: true,
    isConcurrencySafe: () => true,
    handler: ({ message }) => message,
  },
  {
    // Approval-gated in the demo (tenants.demo.policies.approval): try it in the console's Tools page,
    // then decide it on the Approvals page signed in with the approver key.
    name: 'send_announcement',
    description: 'Post an announcement to the whole company (demo: nothing is sent). Needs a human approval.',
    inputSchema: {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200 },
        body: { type: 'string', maxLength: 5000 },
        urgent: { type: 'boolean' },
      },
      required: ['title'],
      additionalProperties: false,
    },
    handler: ({ title, urgent }, ctx) => ({ posted: true, title, urgent: urgent === true, by: ctx.principal.user }),
  },
];
