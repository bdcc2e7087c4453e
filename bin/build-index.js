#!/usr/bin/env node
// Thin shim: `retriever-mcp build` under its own name (built by `npm run build`, run by `npm ci`).
import { hideBin } from 'yargs/helpers';
import { loadCli } from './load-cli.js';

const PROG = 'build-index';

const cli = await loadCli('program', PROG);
await cli.run(hideBin(process.argv), PROG);
