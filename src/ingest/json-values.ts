import { StringDecoder } from 'node:string_decoder';
import { printable, RetrieverError } from '../errors.js';
import { readBlocks } from './byte-source.js';
import type { ReadOptions } from './types.js';

/**
 * Streams the elements of a top-level JSON array (or a single top-level
 * object, as GraphRAG-Bench's medical.json is) one at a time, so a corpus file
 * larger than memory can be read. Only one element's text is held at once.
 */
export async function* readJsonValues(
  path: string,
  opts: ReadOptions = {},
): AsyncGenerator<{ value: unknown; index: number }> {
  const decoder = new StringDecoder('utf8');
  const scanner = new ElementScanner(path);
  for await (const block of readBlocks(path, opts)) {
    for (const v of scanner.feed(decoder.write(block))) yield v;
  }
  scanner.end();
}

/**
 * Finds the top-level elements in text fed to it block by block: it tracks
 * strings, escapes and nesting depth, keeps the current element's text, and
 * parses each element once its closing brace arrives.
 */
class ElementScanner {
  private mode: 'start' | 'array' | 'single' | 'done' = 'start';
  private depth = 0; // nesting inside the current element
  private inString = false;
  private escaped = false;
  private parts: string[] = [];
  private index = 0;
  private line = 1;

  constructor(private readonly path: string) {}

  feed(text: string): Array<{ value: unknown; index: number }> {
    let elemStart = this.depth > 0 || this.inString ? 0 : -1;
    const out: Array<{ value: unknown; index: number }> = [];
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch === 10) this.line++;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (ch === 92)
          this.escaped = true; // backslash
        else if (ch === 34) this.inString = false;
        continue;
      }
      if (this.depth === 0) {
        if (this.outside(ch)) elemStart = i;
        continue;
      }
      if (ch === 34) this.inString = true;
      else if (ch === 123 || ch === 91) this.depth++;
      else if (ch === 125 || ch === 93) {
        this.depth--;
        if (this.depth === 0) {
          this.parts.push(text.slice(elemStart, i + 1));
          out.push({ value: this.parse(this.parts.join('')), index: this.index++ });
          this.parts = [];
          elemStart = -1;
          if (this.mode === 'single') this.mode = 'done';
        }
      }
    }
    if (elemStart >= 0 && (this.depth > 0 || this.inString)) this.parts.push(text.slice(elemStart));
    return out;
  }

  /** A character between elements; true when it opens one. */
  private outside(ch: number): boolean {
    if (this.mode === 'start') {
      if (ch === 91)
        this.mode = 'array'; // [
      else if (ch === 123) {
        this.mode = 'single';
        this.depth = 1;
        return true;
      } else if (!isSpace(ch)) throw notContainer(this.path);
      return false;
    }
    if (this.mode === 'done') {
      if (!isSpace(ch)) throw trailing(this.path, this.line);
      return false;
    }
    if (isSpace(ch) || ch === 44) return false; // whitespace, comma
    if (ch === 93 && this.mode === 'array') {
      this.mode = 'done';
      return false;
    }
    if (ch !== 123) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${this.path}: element ${this.index} near line ${this.line} is not a JSON object; expected an array of objects`,
      );
    }
    this.depth = 1;
    return true;
  }

  end(): void {
    if (this.mode === 'start') throw notContainer(this.path);
    if (this.mode !== 'done' || this.depth !== 0) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${this.path}: file ends inside a JSON value (truncated download?); fetch the file again`,
      );
    }
  }

  private parse(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch (err) {
      const where = `${this.path}: element ${this.index} (near line ${this.line})`;
      if (err instanceof RangeError) {
        throw new RetrieverError('BAD_INPUT', `${where} is nested too deeply to read (${err.message}): flatten it`, {
          cause: err,
        });
      }
      throw new RetrieverError('BAD_INPUT', `${where} is not valid JSON: ${printable((err as Error).message)}`, {
        cause: err,
      });
    }
  }
}

function isSpace(ch: number): boolean {
  return ch === 32 || ch === 10 || ch === 13 || ch === 9 || ch === 0xfeff;
}

function notContainer(path: string): RetrieverError {
  return new RetrieverError('BAD_INPUT', `${path}: expected a JSON array of objects (or one object)`);
}

function trailing(path: string, line: number): RetrieverError {
  return new RetrieverError('BAD_INPUT', `${path}: unexpected data after the end of the JSON value near line ${line}`);
}
