"""BM25 reference peer for bench/text-build.ts: Xapian (Debian's python3-xapian).

build: indexes a JSONL corpus ({"id", "contents"} per line), one document per
       line, with the analysis closest to ours: English Snowball stemming of
       every term (STEM_ALL), Lucene's English stop set dropped, no positions
       (BM25 needs none). One thread, as Xapian indexes.
query: BM25 (Xapian's default weighting) top 10 for each question, one at a
       time, parsed with the same stemmer and stop set; prints latency
       percentiles.

Prints one JSON line on stdout. Never a product dependency.
"""

import argparse
import json
import math
import os
import sys
import time

import xapian

# Lucene's EnglishAnalyzer stop set, as src/text/stopwords.ts
STOPWORDS = (
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with"
).split()


def english_stopper():
    stopper = xapian.SimpleStopper()
    for w in STOPWORDS:
        stopper.add(w)
    return stopper


def build(args):
    os.environ.setdefault("XAPIAN_FLUSH_THRESHOLD", "100000")
    db = xapian.WritableDatabase(args.db, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    tg.set_stemmer(xapian.Stem("english"))
    tg.set_stemming_strategy(xapian.TermGenerator.STEM_ALL)
    tg.set_stopper(english_stopper())
    tg.set_stopper_strategy(xapian.TermGenerator.STOP_ALL)
    start = time.perf_counter()
    n = 0
    with open(args.input, "rb") as f:
        for line in f:
            rec = json.loads(line)
            doc = xapian.Document()
            tg.set_document(doc)
            tg.index_text_without_positions(rec["contents"])
            doc.set_data(rec["id"])
            db.add_document(doc)
            n += 1
            if n % 200000 == 0:
                print(f"xapian: {n} documents", file=sys.stderr, flush=True)
    db.commit()
    db.close()
    seconds = time.perf_counter() - start
    size = sum(os.path.getsize(os.path.join(args.db, f)) for f in os.listdir(args.db))
    print(json.dumps({"documents": n, "seconds": seconds, "perSecond": n / seconds, "bytes": size}))


def query(args):
    db = xapian.Database(args.db)
    qp = xapian.QueryParser()
    qp.set_stemmer(xapian.Stem("english"))
    qp.set_stemming_strategy(xapian.QueryParser.STEM_ALL)
    qp.set_stopper(english_stopper())
    qp.set_default_op(xapian.Query.OP_OR)
    with open(args.questions, encoding="utf-8") as f:
        questions = [json.loads(line) for line in f if line.strip()]
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight())

    def top10(q):
        enquire.set_query(qp.parse_query(q, 0))
        return enquire.get_mset(0, 10)

    for q in questions[:100]:  # warm the page cache, as ours is warmed
        top10(q)
    times = []
    for q in questions:
        t = time.perf_counter()
        top10(q)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()

    def pct(p):  # nearest rank, as src/util/percentile.ts
        return times[min(len(times) - 1, max(0, math.ceil(p / 100 * len(times)) - 1))]

    print(json.dumps({"queries": len(times), "p50ms": pct(50), "p99ms": pct(99)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", choices=["build", "query"], required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--input")
    ap.add_argument("--questions")
    args = ap.parse_args()
    build(args) if args.phase == "build" else query(args)


if __name__ == "__main__":
    main()
