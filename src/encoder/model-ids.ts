/** Model names, apart from the code that loads them (the CLI's defaults import this without ONNX Runtime). */

/**
 * Hub ids whose weights are PyTorch-only map to their ONNX conversions.
 * Any other id is fetched as given, so an ONNX repository also works directly.
 */
export const ONNX_CONVERSIONS: Record<string, string> = {
  'intfloat/e5-small-v2': 'Xenova/e5-small-v2',
  'intfloat/e5-base-v2': 'Xenova/e5-base-v2',
  'intfloat/e5-large-v2': 'Xenova/e5-large-v2',
  'intfloat/e5-small': 'Xenova/e5-small',
  'intfloat/e5-base': 'Xenova/e5-base',
  'intfloat/e5-large': 'Xenova/e5-large',
};

export const DEFAULT_MODEL = 'intfloat/e5-base-v2';

/** How a model family expects queries and passages to be prompted, when its files do not say. */
export interface Prompts {
  query: string;
  passage: string;
}

/** The e5 family's prefixes (intfloat/e5-*, multilingual-e5-*); also the default model's. */
export const E5_PROMPTS: Prompts = { query: 'query: ', passage: 'passage: ' };

/** BAAI's English bge v1.5 models: an instruction on short retrieval queries, none on passages. */
export const BGE_EN_PROMPTS: Prompts = {
  query: 'Represent this sentence for searching relevant passages: ',
  passage: '',
};

/**
 * How a family pools token vectors, when its files do not say: BAAI's bge models take the [CLS]
 * vector (their sentence-transformers config says so; an ONNX conversion often leaves that file
 * out, and mean pooling would quietly cost recall); e5 and MiniLM take the mean.
 */
export function familyPooling(name: string): 'cls' | 'mean' | undefined {
  const n = name.toLowerCase();
  if (/(^|[/_-])bge-(small|base|large)-en/.test(n)) return 'cls';
  if (/(^|[/_-])(multilingual-)?e5(-|$)/.test(n) || /minilm/.test(n)) return 'mean';
  return undefined;
}

/** The family prompts for a model name (hub id or directory name), if the family is known. */
export function familyPrompts(name: string): Prompts | undefined {
  const n = name.toLowerCase();
  if (/(^|[/_-])(multilingual-)?e5(-|$)/.test(n)) return E5_PROMPTS;
  if (/(^|[/_-])bge-(small|base|large)-en/.test(n)) return BGE_EN_PROMPTS;
  return undefined;
}
