import { describe, expect, it } from 'vitest';
import {
  ANN_DEFAULTS_HELP,
  defaultConnectivity,
  defaultExpansionAdd,
  defaultExpansionSearch,
} from '../../../src/index/dense/ann.js';

describe('default HNSW shape', () => {
  it('is a denser graph walked narrower up to 1M chunks (M 24, efSearch 128)', () => {
    expect(defaultConnectivity(20_001)).toBe(24);
    expect(defaultConnectivity(1_000_000)).toBe(24);
    expect(defaultExpansionSearch(1_000_000)).toBe(128);
    expect(defaultExpansionSearch(500_000, 24)).toBe(128);
  });

  it('keeps M 24 up to 20M chunks, walked wider as the corpus grows (384 up to 2M, 768 up to 10M, then 1536)', () => {
    expect(defaultConnectivity(1_000_001)).toBe(24);
    expect(defaultConnectivity(20_000_000)).toBe(24);
    expect(defaultExpansionSearch(1_000_001)).toBe(384);
    expect(defaultExpansionSearch(2_000_000)).toBe(384);
    expect(defaultExpansionSearch(2_000_001)).toBe(768);
    expect(defaultExpansionSearch(10_000_000)).toBe(768);
    expect(defaultExpansionSearch(10_000_001)).toBe(1536);
    expect(defaultExpansionSearch(20_000_000)).toBe(1536);
  });

  it('drops to M 20 above 20M chunks (wiki-18 within 20 GB) with efSearch 1536', () => {
    expect(defaultConnectivity(20_000_001)).toBe(20);
    expect(defaultConnectivity(21_015_324)).toBe(20);
    expect(defaultExpansionSearch(21_015_324)).toBe(1536);
    expect(defaultExpansionSearch(21_015_324, 24)).toBe(1536);
    expect(defaultExpansionSearch(21_015_324, 16)).toBe(1536);
  });

  it('gives a graph built with M 16 by hand (--ann-m 16) the efSearch M 16 needs', () => {
    expect(defaultExpansionSearch(1_000_000, 16)).toBe(384);
    expect(defaultExpansionSearch(2_000_000, 16)).toBe(768);
  });

  it('builds graphs above 2M chunks wide (efConstruction 512), smaller ones at 128', () => {
    expect(defaultExpansionAdd(20_001)).toBe(128);
    expect(defaultExpansionAdd(2_000_000)).toBe(128);
    expect(defaultExpansionAdd(2_000_001)).toBe(512);
    expect(defaultExpansionAdd(21_015_324)).toBe(512);
  });

  it('says its defaults in help text generated from the same tiers', () => {
    expect(ANN_DEFAULTS_HELP.connectivity).toBe('default by chunks: 24 up to 20M, 20 above');
    expect(ANN_DEFAULTS_HELP.expansionAdd).toBe('default by chunks: 128 up to 2M, 512 above');
    expect(ANN_DEFAULTS_HELP.expansionSearch).toBe(
      'default by chunks, with M ≥ 24: 128 up to 1M, 384 up to 2M, 768 up to 10M, 1536 above; ' +
        'with a smaller M: 384 up to 1M, 768 up to 10M, 1536 above',
    );
  });
});
