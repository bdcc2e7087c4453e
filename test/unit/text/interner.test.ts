import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpanInterner } from '../../../src/text/interner.js';
import { heapGrowth } from '../../helpers/heap.js';

// a normaliser that makes stopwords of keys starting with "x", and otherwise tags the key
const norm = (raw: string): string | null => (raw.startsWith('x') ? null : `<${raw}>`);

// keys around the six inline characters, with odd and even lengths, astral and lone surrogates
const key = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', 'x', 'é'), minLength: 1, maxLength: 9 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
);

describe('SpanInterner', () => {
  it('maps equal spans to one handle and different spans to different handles, across growth', () => {
    fc.assert(
      fc.property(fc.array(key, { minLength: 1, maxLength: 400 }), fc.integer({ min: 1, max: 64 }), (keys, max) => {
        // maxEntries as low as 1 forces growth inside a text and clears between texts
        const interner = new SpanInterner(norm, max);
        const text = keys.join(' ');
        let epoch = interner.epoch;
        let seen = new Map<string, number>();
        let at = 0;
        for (const k of keys) {
          const h = interner.intern(text, at, at + k.length);
          if (interner.epoch !== epoch) {
            // the table grew: handles changed, so compare from here on
            epoch = interner.epoch;
            seen = new Map();
            expect(interner.intern(text, at, at + k.length)).toBe(h);
          }
          expect(interner.termOf(h)).toBe(norm(k));
          expect(interner.isStop(h)).toBe(norm(k) === null);
          const before = seen.get(k);
          if (before !== undefined) expect(h).toBe(before);
          else expect([...seen.values()]).not.toContain(h);
          seen.set(k, h);
          at += k.length + 1;
        }
        expect(interner.size).toBe(new Set(keys).size);
        interner.clearIfFull();
        expect(interner.size < max).toBe(true);
      }),
    );
  });

  it('tells apart keys whose hashes collide and whose first six characters match', () => {
    // FNV-1a collisions found by search: same length, same first six characters
    const interner = new SpanInterner(norm);
    const text = 'prefix0tzla prefixn3apa';
    const a = interner.intern(text, 0, 11);
    const b = interner.intern(text, 12, 23);
    expect(a).not.toBe(b);
    expect(interner.termOf(a)).toBe('<prefix0tzla>');
    expect(interner.termOf(b)).toBe('<prefixn3apa>');
    expect(interner.intern(text, 12, 23)).toBe(b);
  });

  it('keeps consumer ids per entry through growth, and resets them', () => {
    const interner = new SpanInterner(norm, 1 << 20);
    const words = Array.from({ length: 50_000 }, (_, i) => `w${i.toString(36)}longer`);
    const text = words.join(' ');
    const spans: Array<[number, number]> = [];
    let at = 0;
    for (const w of words) {
      spans.push([at, at + w.length]);
      at += w.length + 1;
    }
    // assign ids while the table grows several times from its initial size
    spans.forEach(([s, e], i) => interner.setId(interner.intern(text, s, e), i));
    expect(interner.epoch).toBeGreaterThan(0);
    spans.forEach(([s, e], i) => expect(interner.idOf(interner.intern(text, s, e))).toBe(i));
    interner.resetIds();
    for (const [s, e] of spans.slice(0, 100)) expect(interner.idOf(interner.intern(text, s, e))).toBe(-1);
  });

  it('keeps no text alive through the terms it caches', () => {
    // an identity normaliser returns the span itself: a slice of 13+ characters, which V8 makes a view of the text
    const interner = new SpanInterner((raw) => raw, 1 << 16);
    const grew = heapGrowth(() => {
      for (let b = 0; b < 40; b++) {
        const text = `longuniqueword${b.toString(36)}zz ${'filler '.repeat(71_000)}`;
        const handle = interner.intern(text, 0, text.indexOf(' '));
        expect(interner.termOf(handle)).toBe(`longuniqueword${b.toString(36)}zz`);
      }
    });
    expect(grew).toBeLessThan(5e6);
  });

  it('starts over after clear(), and changes the epoch', () => {
    const interner = new SpanInterner(norm, 4);
    const text = 'alpha beta gamma delta';
    interner.intern(text, 0, 5);
    const epoch = interner.epoch;
    interner.clear();
    expect(interner.size).toBe(0);
    expect(interner.epoch).not.toBe(epoch);
    expect(interner.termOf(interner.intern(text, 6, 10))).toBe('<beta>');
    expect(interner.size).toBe(1);
  });
});
