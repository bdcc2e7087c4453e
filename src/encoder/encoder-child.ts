import { serveEncoder, type FromEncoder } from './encoder-serve.js';

/**
 * A build's encoder, in a process of its own: a batch in ONNX Runtime cannot
 * be interrupted, and a process that holds a thread inside one cannot exit
 * until it returns (an e5-base batch of long passages is seconds on two
 * cores; once 272 s under memory pressure). A process can be killed at
 * once, so a stop is immediate; what the batch would have made is
 * recomputed on --resume. Its stdout is not MCP's: the parent maps it to
 * stderr.
 */
if (process.send) {
  const send = process.send.bind(process);
  // the parent gone (killed, or a crash): nothing is left to serve, and nothing to say about it
  // (a build killed with -9 mid-embedding left this process's "Error: write EPIPE" stack behind)
  const gone = (err: Error | null): void => {
    if (err) process.exit(0);
  };
  serveEncoder({
    onMessage: (l) => process.on('message', l),
    post: (m: FromEncoder) => void send(m, undefined, {}, gone),
  });
  process.on('disconnect', () => process.exit(0));
  process.on('error', () => process.exit(0));
}
