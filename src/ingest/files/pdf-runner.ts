import { memoryUsage } from 'node:process';
import { Worker } from 'node:worker_threads';
import { builtFileUrl } from '../../util/built-file.js';
import type { ExtractedText } from './markdown.js';
import { PdfTextError } from './pdf.js';

/** How long and how much memory one PDF may take before it is skipped and named. */
export interface PdfLimits {
  /** Milliseconds for a PDF of `bytes`. */
  timeMs: (bytes: number) => number;
  /** Bytes the process may grow by while a PDF is read (its decoded streams live outside the JS heap). */
  growthBytes: number;
}

/**
 * 30 s plus 5 s a megabyte (a 1 MB PDF with 300 MB of text operators ran past 90 s), and 1 GiB of
 * growth (a 2 MB PDF whose stream inflates to 2 GB peaked at 4.29 GB).
 */
export const DEFAULT_PDF_LIMITS: PdfLimits = {
  timeMs: (bytes) => 30_000 + 5_000 * Math.ceil(bytes / 1e6),
  growthBytes: 2 ** 30,
};

/** How often the process's memory is looked at while a PDF is read. */
const WATCH_MS = 50;

/**
 * Reads PDFs on a thread of their own, one at a time, within limits: a PDF past its time or memory
 * cap, or a build stopped meanwhile, ends the thread at once (the next PDF starts a new one). The
 * thread is kept between PDFs: loading pdf.js is a few hundred milliseconds.
 */
export class PdfRunner {
  private worker: Worker | undefined;
  private next = 0;

  constructor(private readonly limits: PdfLimits = DEFAULT_PDF_LIMITS) {}

  /** The text of one PDF; PdfTextError for no text, a cap reached or a file pdf.js cannot open. */
  async extract(bytes: Uint8Array, signal?: AbortSignal): Promise<ExtractedText> {
    signal?.throwIfAborted();
    const worker = this.thread();
    const id = this.next++;
    const start = memoryUsage.rss();
    const limitMs = this.limits.timeMs(bytes.length);
    return new Promise<ExtractedText>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        clearInterval(watch);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        signal?.removeEventListener('abort', onAbort);
      };
      const stop = (err: Error): void => {
        done();
        this.kill();
        reject(err);
      };
      const onMessage = (m: { id: number; ok: boolean; text?: ExtractedText; noText?: boolean; message?: string }) => {
        if (m.id !== id) return;
        done();
        if (m.ok) resolve(m.text as ExtractedText);
        else reject(m.noText ? new PdfTextError(m.message) : new Error(m.message));
      };
      const onError = (err: Error): void => stop(new PdfTextError(`pdf.js failed on it (${err.message})`));
      const onExit = (): void => stop(new PdfTextError('pdf.js stopped on it'));
      const onAbort = (): void => stop(signal?.reason instanceof Error ? signal.reason : new Error('stopped'));
      const timer = setTimeout(
        () => stop(new PdfTextError(`reading it took over ${Math.round(limitMs / 1000)} s: skipped`)),
        limitMs,
      );
      const watch = setInterval(() => {
        const grown = memoryUsage.rss() - start;
        if (grown > this.limits.growthBytes) {
          stop(
            new PdfTextError(
              `reading it took over ${Math.round(this.limits.growthBytes / 2 ** 20)} MiB of memory ` +
                '(a stream that inflates without end?): skipped',
            ),
          );
        }
      }, WATCH_MS);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      // a copy: the thread may keep or transfer what it is given
      worker.postMessage({ id, bytes: new Uint8Array(bytes) });
    });
  }

  /** Ends the thread (the build is done, or stopped). */
  close(): void {
    this.kill();
  }

  private thread(): Worker {
    if (!this.worker) {
      // its stdout is not ours to print on (it is MCP's on a stdio server): pdf.js's words go to stderr
      this.worker = new Worker(builtFileUrl('./pdf-worker.js', import.meta.url), { stdout: true, stderr: true });
      this.worker.stdout.pipe(process.stderr, { end: false });
      this.worker.stderr.pipe(process.stderr, { end: false });
      this.worker.unref();
    }
    return this.worker;
  }

  private kill(): void {
    const w = this.worker;
    this.worker = undefined;
    if (w) void w.terminate();
  }
}
