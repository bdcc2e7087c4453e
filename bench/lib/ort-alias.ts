/**
 * Loaded with `node --import` by a benchmark's child process (server or
 * build): while RETRIEVER_BENCH_ORT names a folder holding another
 * onnxruntime-node (installed there by the suite, `npm install --prefix
 * DIR onnxruntime-node@VERSION`), every import of `onnxruntime-node` loads
 * that one, in the process, its encoder thread and its encoder processes, so
 * one run compares two ONNX Runtime versions without touching node_modules.
 */
import { register } from 'node:module';

if (process.env['RETRIEVER_BENCH_ORT']) register('./ort-alias-hooks.js', import.meta.url);
