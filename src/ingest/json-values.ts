import { StringDecoder } from 'node:string_decoder';
import { RetrieverError } from '../errors.js';
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
  let mode: 'start' | 'array' | 'single' | 'done' = 'start';
  let depth = 0; // nesting inside the current element
  let inString = false;
  let escaped = false;
  let parts: string[] = [];
  let index = 0;
  let line = 1;

  const parse = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new RetrieverError(
        'BAD_INPUT',
        `${path}: element ${index} (near line ${line}) is not valid JSON: ${(err as Error).message}`,
        { cause: err },
      );
    }
  };

  for await (const block of readBlocks(path, opts)) {
    const text = decoder.write(block);
    let elemStart = depth > 0 || inString ? 0 : -1;
    const out: Array<{ value: unknown; index: number }> = [];
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch === 10) line++;
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === 92)
          escaped = true; // backslash
        else if (ch === 34) inString = false;
        continue;
      }
      if (mode === 'start') {
        if (ch === 91)
          mode = 'array'; // [
        else if (ch === 123) {
          mode = 'single';
          depth = 1;
          elemStart = i;
        } else if (!isSpace(ch)) throw notContainer(path);
        continue;
      }
      if (mode === 'done') {
        if (!isSpace(ch)) throw trailing(path, line);
        continue;
      }
      if (depth === 0) {
        if (isSpace(ch) || ch === 44) continue; // whitespace, comma
        if (ch === 93 && mode === 'array') {
          mode = 'done';
          continue;
        }
        if (ch !== 123) {
          throw new RetrieverError(
            'BAD_INPUT',
            `${path}: element ${index} near line ${line} is not a JSON object; expected an array of objects`,
          );
        }
        elemStart = i;
        depth = 1;
        continue;
      }
      if (ch === 34) inString = true;
      else if (ch === 123 || ch === 91) depth++;
      else if (ch === 125 || ch === 93) {
        depth--;
        if (depth === 0) {
          parts.push(text.slice(elemStart, i + 1));
          out.push({ value: parse(parts.join('')), index: index++ });
          parts = [];
          elemStart = -1;
          if (mode === 'single') mode = 'done';
        }
      }
    }
    if (elemStart >= 0 && (depth > 0 || inString)) parts.push(text.slice(elemStart));
    for (const v of out) yield v;
  }
  if (mode === 'start') throw notContainer(path);
  if (mode !== 'done' || depth !== 0) {
    throw new RetrieverError(
      'BAD_INPUT',
      `${path}: file ends inside a JSON value (truncated download?); fetch the file again`,
    );
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
