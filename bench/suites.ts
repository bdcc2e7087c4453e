/**
 * The live benchmark suites: what each one backs, what it needs, how long it
 * runs, and how its results are rendered. `npm run bench -- NAME` runs
 * `bench/suites/NAME.ts`; `npm run bench:render` writes BENCHMARKS.md,
 * bench/README.md's list and README's tables from `bench/results/*.json`
 * through this list. A suite that is not here is not a benchmark.
 */
import { renderBm25Real, renderScaleCorpus } from './render/bm25-real.js';
import { renderEncoder } from './render/encoder.js';
import { renderEncoderReal } from './render/encoder-real.js';
import { renderEngineAgreement, renderEngineFailover } from './render/engine.js';
import { renderFaissCpu } from './render/faiss-cpu.js';
import { renderCalibration, renderIvfScale } from './render/ivf-scale.js';
import { compactTable, fmt, named, type Result, type Results, rows, runLine } from './render/lib.js';
import { renderMcpEras } from './render/mcp-eras.js';
import { renderNumerics } from './render/numerics.js';
import { renderQueryPath } from './render/query-path.js';
import { renderDenseText, renderQuality } from './render/quality.js';
import { renderMcpSideBySide, renderSeedRatios, renderSideBySide } from './render/side-by-side.js';

export interface Suite {
  /** `npm run bench -- NAME`; results are `bench/results/NAME.json` or `NAME-*.json`. */
  name: string;
  title: string;
  /** The claim it backs and how it measures it, in a few sentences. */
  about: string;
  /** What a run needs beyond `npm ci`. */
  needs: string;
  /** Wall time of a run with the default arguments on the development machine. */
  runtime: string;
  render: (results: Results) => string;
  /** Rendered into docs/benchmarks.md, linked from BENCHMARKS.md's last section (which holds 30 kB). */
  detail?: boolean;
}

/** Each of the suite's result files as a table of its rows, with the line that says where it ran. */
function generic(name: string): (results: Results) => string {
  return (results) => {
    // event-loop's files are not event-loop-bm25's
    const others = SUITES.map((x) => x.name).filter((n) => n !== name && n.startsWith(`${name}-`));
    const mine = named(results, name).filter(([file]) => !others.some((n) => file === n || file.startsWith(`${n}-`)));
    if (mine.length === 0) return `_No results yet: run \`npm run bench -- ${name}\`._`;
    return mine
      .map(([file, r]) => {
        const body = rows(r).length > 0 ? compactTable(rows(r)) : scalars(r);
        return `${mine.length > 1 ? `**${file}**\n\n` : ''}${body}\n\n${runLine(file, r)}.`;
      })
      .join('\n\n');
  };
}

/** A result with no rows: its top-level figures as one list. */
function scalars(r: Result): string {
  const skip = new Set(['date', 'commit', 'command', 'machine']);
  return Object.entries(r)
    .filter(([k, v]) => !skip.has(k) && (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string'))
    .map(([k, v]) => `- ${k}: ${fmt(v)}`)
    .join('\n');
}

export const SUITES: Suite[] = [
  {
    name: 'quality-real',
    title: 'Quality with real models',
    about:
      'Real models (`npm run fetch-models`) built with `--model-path DIR` and searched through the server on every data set in `../shared`. R@k counts supporting paragraphs, evidence chunks or evidence articles. “Tuned” picks the fusion on the even-numbered queries (R@5) and reports the odd ones.',
    needs: '`../shared`, PyPI (models and their export)',
    runtime: 'about 10 min a model',
    render: (results) =>
      `${renderQuality(results)}\n\n### The text the dense arm embeds\n\nEach format’s default (\`--dense-text\`) follows this, from one model on every data set:\n\n${renderDenseText(results)}`,
  },
  {
    name: 'numerics',
    detail: true,
    title: 'Encoder numerics and speed against Python',
    about:
      '1,200 texts (200 over 512 tokens) embedded by us and by `scripts/models/reference_embed.py` (sentence-transformers; `tokenizers` + onnxruntime on the same file), 2 threads each, one run.',
    needs: '`../shared`, PyPI',
    runtime: 'about 5 min a model',
    render: renderNumerics,
  },
  {
    name: 'encoder-real',
    title: 'A real e5 encoder against the Python stacks',
    about:
      'e5-small-v2 fp32 and int8, same ONNX file (ours fuses fp32 attention at load), 2 threads, one run: 1,585 2Wiki passages, batch 32, 200 questions singly; ours also via `POST /retrieve`, caches off.',
    needs: '`../shared`, Maven Central (the models), PyPI (the peers)',
    runtime: 'about 10 min',
    render: renderEncoderReal,
  },
  {
    name: 'query-path',
    detail: true,
    title: 'One query’s path, stage by stage, against Python’s encoder alone',
    about:
      'e5-small-v2 fp32 and int8, same ONNX file and 2 threads, one run: our server answers 2Wiki’s 200 questions one at a time (`POST /retrieve`, dense, top 5, caches off) in rounds alternating with onnxruntime-Python encoding the same questions alone. Stage means come from the server’s own `retriever_stage_seconds`; memory is resident memory at ready against a Python process holding the model after one query; build throughput is our encoder at batch 32. Each ONNX Runtime named runs in the same run.',
    needs:
      '`../shared`, Maven Central (the models), PyPI (onnxruntime, tokenizers), the npm registry (another ONNX Runtime)',
    runtime: 'about 5 min a model and runtime',
    render: renderQueryPath,
  },
  {
    name: 'encoder',
    detail: true,
    title: 'The default model, sized: e5-base-v2’s shape against Python',
    about:
      'e5-base-v2 is not reachable here, its shape is: a BERT-base graph (768 hidden, 12 layers, FFN 3072) with random weights, and its int8 file quantized as the published ones are (per channel, activations per run). Honest for speed, never for quality. Ours in-process (fp32 with its attention fused at load, batches cut by length; int8 queries run one at a time, so that a query’s vector never depends on its neighbours) against onnxruntime-Python (`tokenizers`, batches sorted by length and padded to their longest) on the same files, texts and threads, in one run.',
    needs: '`../shared`, PyPI (numpy, onnx, onnxruntime for the model and the peer)',
    runtime: 'about 6 min',
    render: renderEncoder,
  },
  {
    name: 'rebuild',
    title: 'A rebuild after a small change, against a full build',
    about:
      '2Wiki-200’s 1,585 passages as a folder of Markdown notes (one per article title), e5-small-v2 fp32: a full build, a rebuild after 1% of the notes gained a sentence, and the same rebuild with `--no-reuse-vectors`. Embedded and re-used counts come from the build’s own summary.',
    needs: '`../shared`, Maven Central (the model)',
    runtime: 'about 4 min',
    detail: true,
    render: generic('rebuild'),
  },
  {
    name: 'bm25-real',
    title: 'BM25 on real Wikipedia text, against Lucene, bm25s and tantivy',
    about:
      'The 1.23M real passages of enwiki-1m (2M and 21M: `scale-corpus`’s text), real and agent-style questions, one at a time; block-max and exhaustive give identical hits. Overlap@10 and nDCG@10 judge each peer’s top 10 against ours.',
    needs: '`../shared`, PyPI (bm25s, tantivy, pyserini), Java 21',
    runtime: 'about 40 min at 1.23M',
    render: renderBm25Real,
  },
  {
    name: 'scale-corpus',
    detail: true,
    title: 'The scaled text',
    about:
      'enwiki-1m plus copies re-cut from their own articles, rare words renamed per copy, compared with the real text: lengths, document frequencies, pair lift.',
    needs: '`../shared`',
    runtime: 'about 10 min for 21M',
    render: renderScaleCorpus,
  },
  {
    name: 'side-by-side',
    title: 'The seed stack side by side (REST)',
    about:
      'Search-R1’s `retrieval_server.py`, **unmodified**, beside ours in one run on the same corpus, model and vectors. Ratios (with `mcp-side-by-side`) against the targets: ≥ 5× QPS at 256 clients, ≤ 1/3 memory, first answer ≥ 10× sooner.',
    needs: 'the peers, started by hand (see the suite’s header)',
    runtime: 'about 20 min a run',
    render: (results) =>
      `${renderSeedRatios(results, false)}\n\nEach run at 256 clients (16 and 64 are in the JSON):\n\n${renderSideBySide(results)}`,
  },
  {
    name: 'mcp-side-by-side',
    detail: true,
    title: 'DeepSearch-RL’s MCP server side by side',
    about:
      'DeepSearch-RL’s MCP server (FlashRAG’s MultiRetrieverRouter: bm25s + faiss, RRF), unmodified, beside ours: same SSE load, queries, model, chunks and vectors; our caches off (it has none).',
    needs: '`../shared`, the peer started by hand (see the suite’s header)',
    runtime: 'about 20 min a data set',
    render: renderMcpSideBySide,
  },
  {
    name: 'ivf-scale',
    title: 'wiki-18 at full size: 21M vectors on a 2-core, 24 GB machine',
    about:
      'Clustered 768-d vectors (1M, 5M and 21M, written as float16 in a stream) imported by the real build command into an IVF index of 1-bit codes beside short passages, then served with `--no-encoder` and searched by query vector: build time from the vectors on disk, memory, recall@10 against exact search of 1,000 queries, one client’s latency and QPS at 64 clients, page cache warm and evicted; faiss-cpu’s IVF-PQ with refinement and IVF-RaBitQ on the same vectors and queries in the same run.',
    needs: 'about 75 GB of disk at 21M, PyPI (numpy, onnx, faiss-cpu), Debian’s wrk',
    runtime: 'about 5 h for 1M, 5M and 21M',
    render: renderIvfScale,
  },
  {
    name: 'ivf-calibration',
    detail: true,
    title: 'The IVF index on real e5 vectors',
    about:
      'Real English Wikipedia passages embedded by e5-small-v2 and 1,000 real questions: our IVF of 1-bit codes at several probes and re-scoring depths, our HNSW at its defaults, faiss-cpu IVF-PQ with a refiner and IVF-RaBitQ with the same lists; recall@10 against exact search, one query at a time.',
    needs: 'the passages’ e5-small-v2 vectors (a build’s vectors.bin), PyPI (numpy, faiss-cpu)',
    runtime: 'about 20 min at 200k passages once the vectors exist (embedding them on 2 cores: about 2 h)',
    render: renderCalibration,
  },
  {
    name: 'faiss-cpu',
    detail: true,
    title: 'Our dense arm against faiss-cpu, at 1M and 2M',
    about:
      'faiss-cpu from PyPI (HNSW32 at its defaults and wider searches, IVF-PQ with refinement) on the very vectors and exact truth of `scale`’s indexes, one query at a time and at 2 threads.',
    needs: '`scale`’s indexes and vectors, PyPI (faiss-cpu)',
    runtime: 'about 90 min',
    render: renderFaissCpu,
  },
  {
    name: 'scale',
    detail: true,
    title: 'wiki-18 scale on one 2-core machine',
    about:
      'Generated wiki-18-style passages with clustered 768-d vectors, built and served at 1M and 2M: build, memory, sizes, time to ready, dense recall against exact search, latencies.',
    needs: 'about 40 GB of disk for 2M',
    runtime: 'about 2 h for 1M and 2M',
    render: generic('scale'),
  },
  {
    name: 'engine-agreement',
    detail: true,
    title: 'Engine backend: OpenSearch against local files',
    about: 'The same indexes served from local files and from three OpenSearch nodes (k-NN), same queries.',
    needs: '`../shared`, Java 21, `bash scripts/install-opensearch.sh`, `quality-real`’s indexes',
    runtime: 'about 10 min',
    render: renderEngineAgreement,
  },
  {
    name: 'engine-failover',
    detail: true,
    title: 'Engine backend: the cluster manager killed under load',
    about:
      '256 clients send hybrid queries to a server on the OpenSearch backend; the cluster-manager node is killed mid-run, restarted on its data, and the cluster must go green again with every chunk.',
    needs: '`../shared`, Java 21, `bash scripts/install-opensearch.sh`',
    runtime: 'about 5 min',
    render: renderEngineFailover,
  },
  {
    name: 'load',
    title: 'Load: 256 concurrent clients',
    about:
      '256 clients on `/retrieve`, 100k-chunk hybrid index, batching on and off, and dense; a BERT-base-shaped random encoder (e5-base-v2’s FLOPs) or the tiny e5.',
    needs: 'numpy and onnx for `bench/lib/make_bert_onnx.py` (Debian python3-onnx)',
    runtime: 'about 5 min',
    render: generic('load'),
  },
  {
    name: 'phrasings',
    title: 'A question and its keywords, searched together',
    about:
      '`search` with `query` as a list: each phrasing searched in both arms and the lists fused by RRF. Does a question with its keywords (the question without stop words) find more gold passages than either alone? 2Wiki and the MultiHop-RAG surrogate, hybrid, real e5-small-v2, recall@5 and @10.',
    needs: '`../shared`, Maven Central (e5-small-v2 via `npm run fetch-models`)',
    runtime: 'about 5 min',
    detail: true,
    render: generic('phrasings'),
  },
  {
    name: 'live-folder',
    title: 'A folder served with one command',
    about:
      '`retriever-mcp --input DIR` over 1,585 Markdown notes with the real e5-small-v2: how soon BM25 answers on the first start while the vectors are embedded, and how soon every arm; then ten notes rewritten one after another, each timed from the save to its first hit by BM25 (a word only the new text holds) and by dense (its new sentence as the query).',
    needs: '`../shared`, Maven Central (e5-small-v2 via `npm run fetch-models`)',
    runtime: 'about 3 min',
    render: generic('live-folder'),
  },
  {
    name: 'mixed-load',
    title: 'Mixed load: every kind of request at once',
    about:
      '256 clients for 60 s split over the five kinds of call rollouts send together: `/retrieve` with one query and with a batch of 8, a 2026 MCP `search`, a 2025 MCP `search` in a session, and a 2026 MCP `fetch` with `around: 1`; the tiny e5 over 2Wiki, hybrid, result cache off. One wrk a kind, so each kind’s p50 and p99 are its own: no kind may starve another.',
    needs: '`../shared` (the tiny e5, 2Wiki), Debian’s wrk',
    runtime: 'about 2 min',
    render: generic('mixed-load'),
  },
  {
    name: 'soak',
    detail: true,
    title: 'Soak: steady load',
    about: 'Steady hybrid load with a churning result cache, resident memory sampled every minute.',
    needs: '`../shared` (the tiny e5)',
    runtime: 'the `--seconds` given (600 by default)',
    render: generic('soak'),
  },
  {
    name: 'memory-soak',
    detail: true,
    title: 'Memory under 100k distinct queries',
    about:
      '100k distinct top-100 queries over long passages, then the outside probe’s adversarial patterns; resident memory must stay under the caches’ bound.',
    needs: 'nothing',
    runtime: 'about 10 min',
    render: generic('memory-soak'),
  },
  {
    name: 'mcp-eras',
    detail: true,
    title: 'MCP eras: a client a call, and one client for all',
    about:
      'Both client patterns of RL frameworks, in each protocol era. A new MCP client a call, 64 at once: 2025 mode (initialize, session, DELETE), 2026 mode (server/discover, no session); a fresh server each, RSS after 100k calls. Then one client kept for every call, over HTTP and stdio, 1 and 32 calls in flight.',
    needs: 'nothing',
    runtime: 'about 20 min (`--part long-lived`: 2 min)',
    render: renderMcpEras,
  },
  {
    name: 'event-loop',
    detail: true,
    title: 'Event loop while the encoder is saturated',
    about: '64 searches in flight with the encoder saturated (2 s batches), `/health` polled every 20 ms.',
    needs: 'numpy and onnx for `bench/lib/make_bert_onnx.py` (Debian python3-onnx)',
    runtime: 'about 1 min',
    render: generic('event-loop'),
  },
  {
    name: 'event-loop-bm25',
    detail: true,
    title: 'Event loop under BM25 load',
    about:
      'A BM25 index of 20k long passages under batches of 256 queries and 256 clients; `/health` polled throughout, and the server’s own loop delay.',
    needs: 'nothing',
    runtime: 'about 2 min',
    render: generic('event-loop-bm25'),
  },
  {
    name: 'determinism',
    detail: true,
    title: 'Determinism',
    about: 'The same 300 questions asked of 3 fresh server processes; the answers’ bytes are hashed.',
    needs: 'numpy and onnx for `bench/lib/make_bert_onnx.py` (Debian python3-onnx)',
    runtime: 'about 2 min',
    render: generic('determinism'),
  },
  {
    name: 'overhead',
    detail: true,
    title: 'Server overhead per request',
    about:
      'Server time per request outside the two retrieval arms (HTTP, MCP or REST, fusion, SQLite), encoder stubbed through our own interface.',
    needs: 'numpy and onnx for `bench/lib/make_bert_onnx.py` (Debian python3-onnx)',
    runtime: 'about 3 min',
    render: generic('overhead'),
  },
];

export function suiteNamed(name: string): Suite | undefined {
  return SUITES.find((s) => s.name === name);
}
