import { describe, expect, it } from 'vitest';
import { ivfEfforts } from '../../../src/eval/ann-recall.js';

describe('eval --ann-recall: the IVF settings measured by default', () => {
  it('reaches 16 times the default probes, the share real e5 vectors need for 0.9 (wiki-18: 128 of 16,384)', () => {
    expect(ivfEfforts(128, 500, 16384)).toEqual([
      { probes: 128, rescore: 500 },
      { probes: 256, rescore: 1000 },
      { probes: 512, rescore: 2000 },
      { probes: 1024, rescore: 2000 },
      { probes: 2048, rescore: 2000 },
    ]);
  });

  it('stops at every list, naming each setting once', () => {
    expect(ivfEfforts(16, 500, 32)).toEqual([
      { probes: 16, rescore: 500 },
      { probes: 32, rescore: 1000 },
      { probes: 32, rescore: 2000 },
    ]);
  });
});
