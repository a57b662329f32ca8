import { describe, expect, it } from 'vitest';
import { keyGroup, parseSamples } from '../../bench/tick-state.js';

// One sample as Node 24's %DebugPrint writes it (shortened): the probe's line, `{}`'s map with its transitions,
// then nextTick's feedback vector.
const sample = (n: number, literalIcs: string[], tickKey: boolean): string =>
  [
    `DebugPrint: 0x1: [String]: c"TICKPROBE {"sample":${n},"sameMap":true,"fast":true,"nsPerTick":40,"nextTickStatus":81}"`,
    'DebugPrint: 0x2: [JS_OBJECT_TYPE]',
    ` - transitions #${tickKey ? 3 : 2}: 0x3 <TransitionArray[77]>`,
    `   Transitions #${tickKey ? 3 : 2}:`,
    '     0x4: [String]: #__fjs_root_12: (transition to (const data field, attrs: [WEC]) @ Any) -> 0x5 <Map[56](HOLEY_ELEMENTS)>',
    '     0x6: [String] in ReadOnlySpace: #name: (transition to (const data field, attrs: [_EC]) @ Any) -> 0x7 <Map[56](HOLEY_ELEMENTS)>',
    ...(tickKey ? ['     0x8 <Symbol: async_id_symbol>: (transition to (const data field, attrs: [WEC]) @ Any) -> 0x9 <Map[56](HOLEY_ELEMENTS)>'] : []),
    ' - feedback vector: 0xa: [FeedbackVector]',
    ...literalIcs.map((state, slot) => ` - slot #${50 + 2 * slot} DefineKeyedOwnPropertyInLiteral ${state} {`),
    ` - slot #60 LoadProperty MONOMORPHIC`,
    `DebugPrint: 0xb: [String]: c"TICKPROBE-END....."`,
  ].join('\n');

describe("bench/tick-state.ts's reading of the probe's samples", () => {
  it("reads each sample's tick figures, `{}`'s transitions and first keys, and the literal's IC states", () => {
    const [first, second] = parseSamples(`{"port":1}\n${sample(1, ['MONOMORPHIC', 'MONOMORPHIC'], true)}\n${sample(2, ['MONOMORPHIC', 'MEGAMORPHIC'], false)}\n`);
    expect(first).toMatchObject({ sample: 1, sameMap: true, nsPerTick: 40, nextTickStatus: 81, transitions: 3, hasTickKey: true, literalIcs: ['MONO', 'MONO'] });
    expect(first?.keys).toEqual(new Map([['__fjs_root_N', 1], ['name', 1], ['<Symbol: async_id_symbol>', 1]]));
    expect(second).toMatchObject({ sample: 2, transitions: 2, hasTickKey: false, literalIcs: ['MONO', 'MEGA'] });
  });

  it('groups numbered first keys as one', () => {
    expect(keyGroup('__fjs_root_317')).toBe('__fjs_root_N');
    expect(keyGroup('_errs12')).toBe('_errsN');
  });
});
