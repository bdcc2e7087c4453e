import { describeValue, RetrieverError } from '../errors.js';
import { MAX_TOKENIZER_BYTES, readModelJson } from './read-model-file.js';
import {
  forEachBertWord,
  isBertDroppedChar,
  isBertPunctuation,
  isBertWhitespace,
  isCjkCodePoint,
} from '../text/bert-pretokenize.js';
import { SpanInterner } from '../text/interner.js';

/**
 * A BERT WordPiece tokenizer that reproduces Hugging Face `tokenizers`
 * (BertNormalizer → BertPreTokenizer → WordPiece → [CLS] … [SEP]) from a
 * model's tokenizer.json. Truncation keeps [SEP] last, as HF does.
 */
export interface Encoding {
  ids: number[];
}

export interface WordPieceConfig {
  vocab: Map<string, number>;
  unkToken: string;
  prefix: string;
  maxCharsPerWord: number;
  lowercase: boolean;
  stripAccents: boolean;
  cleanText: boolean;
  handleChineseChars: boolean;
  cls: number;
  sep: number;
  pad: number;
}

interface TokenizerJson {
  normalizer?: {
    type?: string;
    lowercase?: boolean;
    strip_accents?: boolean | null;
    clean_text?: boolean;
    handle_chinese_chars?: boolean;
  } | null;
  pre_tokenizer?: { type?: string } | null;
  model?: {
    type?: string;
    vocab?: Record<string, number>;
    unk_token?: string;
    continuing_subword_prefix?: string;
    max_input_chars_per_word?: number;
  };
}

const RE_MN = /\p{Mn}/u;

export class WordPieceTokenizer {
  private readonly cache = new Map<string, number[]>();
  /** Raw word span → its WordPiece count (in `ids`), for countTokens. */
  private readonly spanCounts = new SpanInterner(() => null, 1 << 20);
  private readonly unkId: number;
  /** Continuation pieces with their "##" prefix removed, so a probe needs no concatenation. */
  private readonly contVocab = new Map<string, number>();
  /** Code points of the longest piece: no longer substring can match. */
  private readonly maxPieceChars: number;

  constructor(readonly config: WordPieceConfig) {
    const unk = config.vocab.get(config.unkToken);
    if (unk === undefined)
      throw new RetrieverError('MODEL', `tokenizer vocabulary lacks the unknown token ${config.unkToken}`);
    this.unkId = unk;
    let longest = 1;
    for (const [piece, id] of config.vocab) {
      const cont = piece.startsWith(config.prefix) && piece.length > config.prefix.length;
      const body = cont ? piece.slice(config.prefix.length) : piece;
      if (cont) this.contVocab.set(body, id);
      longest = Math.max(longest, Array.from(body).length);
    }
    this.maxPieceChars = longest;
  }

  /**
   * Loads tokenizer.json; only BERT WordPiece tokenizers (e5, BGE, MiniLM…) are
   * supported. `vocabSize` (config.json's) bounds the ids: each indexes a row of
   * the model's embedding table.
   */
  static fromFile(path: string, vocabSize?: number): WordPieceTokenizer {
    const json = readModelJson(path, MAX_TOKENIZER_BYTES) as TokenizerJson;
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw new RetrieverError(
        'MODEL',
        `${path} is not a tokenizer (a JSON object with a "model"): re-download the model`,
      );
    }
    const model = json.model;
    if (model?.type !== 'WordPiece' || typeof model.vocab !== 'object' || model.vocab === null) {
      throw new RetrieverError(
        'MODEL',
        `${path}: model type "${model?.type ?? 'none'}" is not supported; retriever-mcp reads BERT WordPiece tokenizers`,
      );
    }
    const norm = json.normalizer ?? {};
    if (json.normalizer && norm.type !== 'BertNormalizer') {
      throw new RetrieverError(
        'MODEL',
        `${path}: normalizer "${norm.type}" is not supported (expected BertNormalizer)`,
      );
    }
    if (json.pre_tokenizer && json.pre_tokenizer.type !== 'BertPreTokenizer') {
      throw new RetrieverError(
        'MODEL',
        `${path}: pre-tokenizer "${json.pre_tokenizer.type}" is not supported (expected BertPreTokenizer)`,
      );
    }
    const vocab = new Map(Object.entries(model.vocab));
    checkVocabIds(path, vocab, vocabSize);
    const lowercase = norm.lowercase ?? true;
    const special = (t: string): number => {
      const id = vocab.get(t);
      if (id === undefined) throw new RetrieverError('MODEL', `${path}: vocabulary lacks ${t}`);
      return id;
    };
    return new WordPieceTokenizer({
      vocab,
      unkToken: model.unk_token ?? '[UNK]',
      prefix: model.continuing_subword_prefix ?? '##',
      maxCharsPerWord: model.max_input_chars_per_word ?? 100,
      lowercase,
      stripAccents: norm.strip_accents ?? lowercase,
      cleanText: norm.clean_text ?? true,
      handleChineseChars: norm.handle_chinese_chars ?? true,
      cls: special('[CLS]'),
      sep: special('[SEP]'),
      pad: vocab.get('[PAD]') ?? 0,
    });
  }

  /** [CLS] tokens [SEP], truncated to maxLength with [SEP] kept last. */
  encode(text: string, maxLength: number): Encoding {
    const ids = [this.config.cls];
    const budget = Math.max(0, maxLength - 2);
    for (const word of this.words(text)) {
      for (const id of this.wordPieces(word)) {
        if (ids.length - 1 >= budget) break;
        ids.push(id);
      }
      if (ids.length - 1 >= budget) break;
    }
    ids.push(this.config.sep);
    return { ids };
  }

  /** Words with their WordPiece counts and source offsets (for the chunker). */
  wordSpans(text: string): Array<{ start: number; end: number; tokens: number }> {
    const out: Array<{ start: number; end: number; tokens: number }> = [];
    this.scan(text, (word, start, end) => out.push({ start, end, tokens: this.wordPieces(word).length }));
    return out;
  }

  /**
   * The number of WordPiece tokens of `text` (no [CLS]/[SEP]): the sum over
   * wordSpans(text). Build-index counts every chunk, so this path looks each
   * raw word span up by its characters (no string built, no normalization)
   * and only works a word out the first time it is seen.
   */
  countTokens(text: string): number {
    const c = this.config;
    if (!c.cleanText || !c.handleChineseChars) return this.countTokensSlow(text);
    this.spanCounts.clearIfFull();
    let n = 0;
    forEachBertWord(text, (start, end) => (n += this.spanCount(text, start, end)));
    return n;
  }

  /** countTokens through scan() and normalizeWord(): the reference the fast path must equal. */
  countTokensSlow(text: string): number {
    let n = 0;
    this.scan(text, (word) => (n += this.wordPieces(word).length));
    return n;
  }

  private spanCount(text: string, start: number, end: number): number {
    const spans = this.spanCounts;
    const idx = spans.intern(text, start, end);
    let count = spans.idOf(idx);
    if (count < 0) {
      let word = '';
      for (let i = start; i < end;) {
        const cp = text.codePointAt(i) as number;
        if (!isBertDroppedChar(cp)) word += String.fromCodePoint(cp);
        i += cp > 0xffff ? 2 : 1;
      }
      count = this.wordPieces(this.normalizeWord(word)).length;
      spans.setId(idx, count);
    }
    return count;
  }

  private words(text: string): string[] {
    const out: string[] = [];
    this.scan(text, (w) => out.push(w));
    return out;
  }

  /**
   * BertNormalizer + BertPreTokenizer in one pass over the original text:
   * emits each normalized word with its [start, end) offsets in `text`.
   */
  private scan(text: string, emit: (word: string, start: number, end: number) => void): void {
    const c = this.config;
    let word = '';
    let wordStart = -1;
    let wordEnd = -1;
    const flush = (): void => {
      if (wordStart >= 0) emit(this.normalizeWord(word), wordStart, wordEnd);
      word = '';
      wordStart = -1;
    };
    for (let i = 0; i < text.length;) {
      const cp = text.codePointAt(i) as number;
      const w = cp > 0xffff ? 2 : 1;
      if (c.cleanText && isBertDroppedChar(cp)) {
        i += w;
        continue;
      }
      if (isBertWhitespace(cp)) flush();
      else if (isBertPunctuation(cp) || (c.handleChineseChars && isCjkCodePoint(cp))) {
        flush();
        emit(this.normalizeWord(String.fromCodePoint(cp)), i, i + w);
      } else {
        if (wordStart < 0) wordStart = i;
        word += String.fromCodePoint(cp);
        wordEnd = i + w;
      }
      i += w;
    }
    flush();
  }

  private normalizeWord(word: string): string {
    let w = word;
    if (this.config.stripAccents) w = stripMarks(w.normalize('NFD'));
    if (this.config.lowercase) w = w.toLowerCase();
    return w;
  }

  /** Greedy longest-match-first over code points; a word with no split is [UNK]. */
  private wordPieces(word: string): number[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    // code-unit offset of every code point boundary (identity for BMP-only words)
    let bounds: number[] | undefined;
    for (let i = 0; i < word.length; i++) {
      const c = word.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff) {
        bounds = [0];
        for (let j = 0; j < word.length;) {
          j += (word.codePointAt(j) as number) > 0xffff ? 2 : 1;
          bounds.push(j);
        }
        break;
      }
    }
    const n = bounds ? bounds.length - 1 : word.length;
    const at = (k: number): number => (bounds ? (bounds[k] as number) : k);
    let pieces: number[];
    if (n === 0) pieces = [];
    else if (n > this.config.maxCharsPerWord) pieces = [this.unkId];
    else {
      pieces = [];
      let start = 0;
      while (start < n) {
        const vocab = start > 0 ? this.contVocab : this.config.vocab;
        let end = Math.min(n, start + this.maxPieceChars);
        let found: number | undefined;
        while (start < end) {
          found = vocab.get(word.slice(at(start), at(end)));
          if (found !== undefined) break;
          end--;
        }
        if (found === undefined) {
          pieces = [this.unkId];
          break;
        }
        pieces.push(found);
        start = end;
      }
    }
    if (this.cache.size > 200_000) this.cache.clear();
    this.cache.set(word, pieces);
    return pieces;
  }
}

function stripMarks(s: string): string {
  let out = '';
  for (const ch of s) if (!RE_MN.test(ch)) out += ch;
  return out;
}

/**
 * Every token id must be an integer row of the model's embedding table: an id
 * of 1e9 made each query holding that token fail inside ONNX Runtime ("Gather
 * … out of bounds"), -7 wrapped round silently (wrong vectors), 3.5 and "x"
 * failed as BigInts with no file named.
 */
function checkVocabIds(path: string, vocab: ReadonlyMap<string, unknown>, vocabSize: number | undefined): void {
  const max = (vocabSize ?? 2 ** 31) - 1;
  for (const [token, id] of vocab) {
    if (typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= max) continue;
    const size = vocabSize === undefined ? '' : ` (config.json: vocab_size ${vocabSize})`;
    throw new RetrieverError(
      'MODEL',
      `${path}: token ${describeValue(token)} has id ${describeValue(id)}, but ids must be integers from 0 to ${max}${size}: ` +
        'the tokenizer does not belong to this model, or the file is damaged; re-download the model',
    );
  }
}
