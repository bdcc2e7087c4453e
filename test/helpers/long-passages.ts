/**
 * Deterministic wiki-18-format passages of ~500 words drawn from a syllable
 * vocabulary, for memory and load tests where the size of each hit matters
 * (the result cache held top-100 lists of such passages).
 */
export function makeWords(count: number, seed = 7): string[] {
  const syl = [
    'ka',
    'lo',
    'mi',
    'ren',
    'tas',
    'vo',
    'qui',
    'bel',
    'dor',
    'fen',
    'gra',
    'hu',
    'jin',
    'mar',
    'nel',
    'pos',
  ];
  const rnd = prng(seed);
  const out = new Set<string>();
  while (out.size < count) {
    let w = '';
    const n = 2 + Math.floor(rnd() * 3);
    for (let i = 0; i < n; i++) w += syl[Math.floor(rnd() * syl.length)];
    out.add(w);
  }
  return [...out];
}

export function makeLongPassages(count: number, wordsEach = 500, seed = 11): Array<{ id: string; contents: string }> {
  const words = makeWords(3000, seed);
  const rnd = prng(seed + 1);
  return Array.from({ length: count }, (_, i) => {
    const body: string[] = [];
    for (let j = 0; j < wordsEach; j++) body.push(words[Math.floor(rnd() ** 2 * words.length)] as string);
    return { id: String(i), contents: `"Passage ${i}"\n${body.join(' ')}.` };
  });
}

/** Distinct queries of `n` words from the same vocabulary. */
export function makeQueries(count: number, n = 4, seed = 11): string[] {
  const words = makeWords(3000, seed);
  const rnd = prng(seed + 99);
  const out = new Set<string>();
  while (out.size < count) {
    const q: string[] = [];
    for (let j = 0; j < n; j++) q.push(words[Math.floor(rnd() * 300)] as string);
    out.add(q.join(' '));
  }
  return [...out];
}

function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}
