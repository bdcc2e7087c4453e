/**
 * Bounded selection of the k best (score, id) pairs. Higher scores win; equal
 * scores are ordered by the smaller id so results are deterministic.
 */
export interface ScoredHit {
  num: number;
  score: number;
}

export class TopK {
  private readonly scores: Float64Array;
  private readonly nums: Int32Array;
  /** A number carried with each hit (`push`'s third argument), for `entries`. */
  private readonly extras: Float64Array;
  private size = 0;

  constructor(readonly k: number) {
    this.scores = new Float64Array(k);
    this.nums = new Int32Array(k);
    this.extras = new Float64Array(k);
  }

  /** True when (score, num) would enter the current top k. */
  accepts(score: number, num: number): boolean {
    if (this.size < this.k) return true;
    return better(score, num, this.scores[0] as number, this.nums[0] as number);
  }

  /** The k-th best score once k hits are held, else -Infinity. */
  threshold(): number {
    return this.size === this.k && this.k > 0 ? (this.scores[0] as number) : -Infinity;
  }

  push(score: number, num: number, extra = 0): void {
    if (this.k === 0) return;
    if (this.size < this.k) {
      let i = this.size++;
      // sift up: the root holds the worst kept hit
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!better(this.scores[p] as number, this.nums[p] as number, score, num)) break;
        this.move(p, i);
        i = p;
      }
      this.place(i, score, num, extra);
      return;
    }
    if (!better(score, num, this.scores[0] as number, this.nums[0] as number)) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      let w = l;
      if (
        r < this.size &&
        better(this.scores[l] as number, this.nums[l] as number, this.scores[r] as number, this.nums[r] as number)
      )
        w = r;
      if (!better(score, num, this.scores[w] as number, this.nums[w] as number)) break;
      this.move(w, i);
      i = w;
    }
    this.place(i, score, num, extra);
  }

  /** The hits with what `push` carried for each, in no order. */
  entries(): Array<ScoredHit & { extra: number }> {
    const out: Array<ScoredHit & { extra: number }> = [];
    for (let i = 0; i < this.size; i++)
      out.push({ num: this.nums[i] as number, score: this.scores[i] as number, extra: this.extras[i] as number });
    return out;
  }

  private move(from: number, to: number): void {
    this.scores[to] = this.scores[from] as number;
    this.nums[to] = this.nums[from] as number;
    this.extras[to] = this.extras[from] as number;
  }

  private place(i: number, score: number, num: number, extra: number): void {
    this.scores[i] = score;
    this.nums[i] = num;
    this.extras[i] = extra;
  }

  /** Best first. */
  result(): ScoredHit[] {
    const out: ScoredHit[] = [];
    for (let i = 0; i < this.size; i++) out.push({ num: this.nums[i] as number, score: this.scores[i] as number });
    return out.sort(compareHits);
  }
}

/** Is (sa, na) ranked above (sb, nb)? */
function better(sa: number, na: number, sb: number, nb: number): boolean {
  return sa > sb || (sa === sb && na < nb);
}

export function compareHits(a: ScoredHit, b: ScoredHit): number {
  return b.score - a.score || a.num - b.num;
}
