import type { AnnParams } from '../../src/index/dense/ann.js';

/** A small fixed graph shape for tests (M 16); builds use size-dependent defaults instead. */
export const TEST_ANN: AnnParams = { connectivity: 16, expansionAdd: 128, expansionSearch: 384, quantization: 'i8' };
