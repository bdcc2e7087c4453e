/**
 * The order of BM25 terms in run files, the merge and the term dictionary:
 * UTF-16 code-unit order, JavaScript's `<` on strings. The inversion worker's
 * WebAssembly term counter sorts its terms in the same order
 * (src/index/bm25/wasm/term-counter.ts `orderTerms`); a test holds the two together.
 */
export function compareTerms(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
