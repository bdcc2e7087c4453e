/**
 * server.json, as the MCP Registry reads it: valid against the schema the
 * registry itself validates with (its repository's
 * internal/validators/schemas, fetched from the Go module proxy at a pinned
 * release), consistent with package.json, and with every variable a
 * transport URL names defined, as the registry's semantic check requires.
 * And the package a registry user installs holds only what it needs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

const REGISTRY = { module: 'github.com/modelcontextprotocol/registry', version: 'v1.8.9' };
const SCHEMA_PATH = 'internal/validators/schemas/2025-12-11.json';
const cache = join(REPO_ROOT, '.cache', 'registry', REGISTRY.version);

type Json = Record<string, unknown>;
const serverJson = JSON.parse(readFileSync(join(REPO_ROOT, 'server.json'), 'utf8')) as Json;
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Json;

/** The registry's schema file from its release's module zip (cached under .cache/). */
async function registrySchema(): Promise<Json> {
  const out = join(cache, '2025-12-11.json');
  if (!existsSync(out)) {
    const proxy = (process.env['GOPROXY'] ?? 'https://proxy.golang.org').split(/[,|]/)[0] as string;
    const url = `${proxy}/${REGISTRY.module}/@v/${REGISTRY.version}.zip`;
    const res = await fetch(url);
    if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
    mkdirSync(cache, { recursive: true });
    const zip = join(cache, 'module.zip');
    writeFileSync(zip, Buffer.from(await res.arrayBuffer()));
    const member = `${REGISTRY.module}@${REGISTRY.version}/${SCHEMA_PATH}`;
    const py = 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))';
    writeFileSync(out, execFileSync('python3', ['-c', py, zip, member]));
  }
  return JSON.parse(readFileSync(out, 'utf8')) as Json;
}

let schema: Json;
beforeAll(async () => {
  schema = await registrySchema();
}, 120_000);

describe('server.json for the MCP Registry', () => {
  it('is valid against the registry schema it names', () => {
    expect(schema['$id']).toBe(serverJson['$schema']);
    const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
    const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
    const validate = ajv.compile(schema);
    const ok = validate(serverJson);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
    // the check can fail: a description over the registry's 100 characters does
    expect(validate({ ...serverJson, description: 'x'.repeat(101) })).toBe(false);
  });

  it('names this package, its version and mcpName, over stdio and Streamable HTTP', () => {
    expect(serverJson['name']).toBe(pkg['mcpName']);
    expect(serverJson['version']).toBe(pkg['version']);
    const packages = serverJson['packages'] as Json[];
    for (const p of packages) {
      expect(p).toMatchObject({ registryType: 'npm', identifier: pkg['name'], version: pkg['version'] });
    }
    expect(packages.map((p) => (p['transport'] as Json)['type']).sort()).toEqual(['stdio', 'streamable-http']);
  });

  it('defines every variable a transport URL names (the registry rejects one that does not)', () => {
    for (const p of serverJson['packages'] as Json[]) {
      const url = ((p['transport'] as Json)['url'] as string | undefined) ?? '';
      const defined = new Set<string>();
      for (const a of [...((p['packageArguments'] as Json[]) ?? []), ...((p['runtimeArguments'] as Json[]) ?? [])]) {
        for (const k of ['name', 'valueHint']) if (typeof a[k] === 'string') defined.add(a[k] as string);
      }
      for (const e of (p['environmentVariables'] as Json[]) ?? []) defined.add(e['name'] as string);
      for (const m of url.matchAll(/\{([^}]+)\}/g)) expect(defined, `${url} names {${m[1]}}`).toContain(m[1]);
    }
  });

  it('the environment variables it lists are the ones the server reads', () => {
    const config = readFileSync(join(REPO_ROOT, 'src', 'config.ts'), 'utf8');
    for (const p of serverJson['packages'] as Json[]) {
      for (const e of (p['environmentVariables'] as Json[]) ?? []) {
        expect(config, e['name'] as string).toContain(`env['${e['name'] as string}']`);
      }
    }
  });
});

describe('the package the registry points at', () => {
  it('`npm pack` holds the built code, its docs and corpus recipes, and nothing else', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path) ?? [];
    const allowed =
      /^(bin\/[\w-]+\.js|dist\/src\/.+\.js|dist\/wasm\/[\w-]+\.wasm|corpora\/[\w.-]+|(README|DESIGN|CHANGELOG|BENCHMARKS|RELIABILITY|CONTRIBUTING)\.md|docs\/(guide|benchmarks)\.md|docs\/images\/[\w-]+\.png|docs\/releases\/[\w.-]+\.md|docs\/lab-notes\/2026-11-24-hnsw-orphans\.md|LICENSE|package\.json)$/;
    expect(files.filter((f) => !allowed.test(f))).toEqual([]);
    expect(files).toContain('dist/src/cli/retriever-mcp.js');
    // every document README links to travels with it (scripts/check-docs.mjs checks the links)
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'BENCHMARKS.md', 'docs/guide.md']));
    expect(files.some((f) => f.endsWith('.map') || f.startsWith('test/') || f.startsWith('src/'))).toBe(false);
  });
});
