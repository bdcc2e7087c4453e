/**
 * A file of the built package (dist/), named relative to the calling module as
 * it sits in dist/: `moduleUrl` is the caller's `import.meta.url`, a module
 * under dist/src/, or its source under src/ when vitest runs the TypeScript,
 * whose workers and WebAssembly still come from the build.
 */
export function builtFileUrl(relative: string, moduleUrl: string): URL {
  return new URL(relative, moduleUrl.endsWith('.ts') ? moduleUrl.replace('/src/', '/dist/src/') : moduleUrl);
}
