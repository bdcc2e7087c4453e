import type { VerifyMode } from '../index/file-integrity.js';
import { openCorpus, type DenseOpener, type OpenCorpus } from '../search/open-corpus.js';
import { Retriever, type RetrieverOptions } from '../search/retriever.js';
import type { QueryEncoder } from '../search/types.js';
import type { Logger } from '../util/log.js';
import { formatCount } from '../util/progress.js';

export interface LoadOptions {
  indexDir: string;
  corpora: string[];
  retriever: RetrieverOptions;
  log: Logger;
  openDense?: DenseOpener;
  verify?: VerifyMode | 'auto';
  /** BM25 worker threads per hybrid corpus (0 or absent: inline). */
  bm25Threads?: number;
  /** Opens the query encoders of the corpora that have a dense arm, keyed by corpus name. */
  loadEncoders?: (corpora: OpenCorpus[]) => Promise<Map<string, QueryEncoder>>;
}

/** Opens and checks every corpus, then the encoder; nothing is served until all succeed. */
export async function loadRetriever(opts: LoadOptions): Promise<Retriever> {
  const opened: OpenCorpus[] = [];
  try {
    for (const name of opts.corpora) {
      const c = openCorpus(opts.indexDir, name, {
        ...(opts.openDense ? { openDense: opts.openDense } : {}),
        verify: opts.verify ?? 'auto',
        log: opts.log,
        bm25Threads: opts.bm25Threads ?? 0,
      });
      opened.push(c);
      opts.log.info(
        `opened ${name}: ${formatCount(c.manifest.corpus.chunks)} chunks, modes ${c.modes.join('/')}, built ${c.manifest.built_at}`,
      );
    }
    const encoders = opts.loadEncoders ? await opts.loadEncoders(opened) : new Map<string, QueryEncoder>();
    return new Retriever(opened, encoders, opts.retriever);
  } catch (err) {
    for (const c of opened) c.close();
    throw err;
  }
}
