#!/usr/bin/env node
// Thin shim: the program lives in dist/src/cli (built by `npm run build`, run by `npm ci`).
import { loadCli } from './load-cli.js';

const cli = await loadCli('program');
await cli.run();
