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
