/**
 * `s` as a string that shares no characters with a larger one.
 *
 * V8 makes a slice of 13 or more characters (`text.slice(a, b)`, and any
 * string derived from one without a change, as a word that normalising left
 * as it was) a view into the sliced string, which then stays alive as long as
 * the view. A table that keeps terms for a whole build kept in this way every
 * batch text that brought a new long word: half of an inversion worker's heap
 * (53 MB against 26 MB after 150k generated passages), all of it copied by
 * each young-generation collection and promoted. Shorter strings are always
 * copies. A copy costs a concatenation and a slice; callers call this once
 * per new term, not per word.
 */
export function ownString(s: string): string {
  // flattening the concatenation copies the characters into a string of its own, which the
  // slice then views (it alone, one character longer than the term)
  return s.length < 13 ? s : (s + ' ').slice(0, -1);
}
