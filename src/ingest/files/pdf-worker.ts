import { parentPort } from 'node:worker_threads';
import { extractPdf, PdfTextError } from './pdf.js';

/**
 * pdf-runner.ts's thread: one PDF at a time, its text or why there is none. pdf.js runs here, not
 * on the build's thread, so a PDF that inflates without end or parses for minutes can be stopped
 * at once (the thread is terminated) without stopping the build.
 */
parentPort?.on('message', (msg: { id: number; bytes: Uint8Array }) => {
  extractPdf(msg.bytes).then(
    (text) => parentPort?.postMessage({ id: msg.id, ok: true, text }),
    (err: unknown) =>
      parentPort?.postMessage({
        id: msg.id,
        ok: false,
        noText: err instanceof PdfTextError,
        message: (err as Error).message,
      }),
  );
});
