import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  cachedPath,
  fetchHubFile,
  fetchOptionalHubFile,
  fetchRepoFiles,
  type HubConfig,
  type HubFile,
} from '../../../src/hub/download.js';
import { silentLogger } from '../../../src/util/log.js';
import { startHubServer, type HubServer } from '../../helpers/hub-server.js';
import { HAS_SHARED, makeTempDir, sharedPath } from '../../helpers/paths.js';

const tmp = makeTempDir();
afterAll(tmp.cleanup);
let server: HubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const sha256 = (p: string): string => createHash('sha256').update(readFileSync(p)).digest('hex');
const file = (path: string): HubFile => ({ repoType: 'model', repo: 'Xenova/e5-tiny', revision: 'main', path });
let n = 0;
const config = (url: string, over: Partial<HubConfig> = {}): HubConfig => ({
  endpoint: url,
  cacheDir: join(tmp.dir, `cache-${n++}`),
  offline: false,
  log: silentLogger,
  progress: false,
  ...over,
});

describe.skipIf(!HAS_SHARED)('Hugging Face download against a local hub (HF_ENDPOINT)', () => {
  const repo = { repoType: 'model' as const, repo: 'Xenova/e5-tiny', dir: sharedPath('models/tiny-e5') };

  it('downloads LFS (redirected, sha256) and regular (git sha1) files into the hub cache layout', async () => {
    server = await startHubServer({ repos: [repo] });
    const cfg = config(server.url);
    const onnx = await fetchHubFile(cfg, file('onnx/model.onnx'));
    const tok = await fetchHubFile(cfg, file('tokenizer.json'));
    expect(sha256(onnx)).toBe(sha256(sharedPath('models/tiny-e5/onnx/model.onnx')));
    expect(readFileSync(tok, 'utf8')).toBe(readFileSync(sharedPath('models/tiny-e5/tokenizer.json'), 'utf8'));
    const repoDir = join(cfg.cacheDir, 'models--Xenova--e5-tiny');
    expect(onnx).toBe(join(repoDir, 'snapshots', 'c0ffee0000000000000000000000000000000000', 'onnx', 'model.onnx'));
    expect(lstatSync(onnx).isSymbolicLink()).toBe(true);
    expect(readdirSync(join(repoDir, 'blobs'))).toContain(sha256(onnx));
    expect(readFileSync(join(repoDir, 'refs', 'main'), 'utf8')).toBe('c0ffee0000000000000000000000000000000000');
    expect(server.requests).toContain(`GET /cdn/${sha256(onnx)}`);
  });

  it('resumes a cut download with a Range request and verifies the result', async () => {
    server = await startHubServer({ repos: [repo], cutOnce: ['onnx/model.onnx'] });
    const path = await fetchHubFile(config(server.url), file('onnx/model.onnx'));
    expect(sha256(path)).toBe(sha256(sharedPath('models/tiny-e5/onnx/model.onnx')));
    expect(server.requests.filter((r) => r.startsWith('GET /cdn/'))).toHaveLength(2);
  });

  it('rejects a corrupted file by checksum and leaves nothing in the cache', async () => {
    server = await startHubServer({ repos: [repo], corrupt: ['onnx/model.onnx'] });
    const cfg = config(server.url);
    await expect(fetchHubFile(cfg, file('onnx/model.onnx'))).rejects.toThrow(/checksum mismatch/);
    expect(cachedPath(cfg.cacheDir, file('onnx/model.onnx'))).toBeUndefined();
    const blobs = join(cfg.cacheDir, 'models--Xenova--e5-tiny', 'blobs');
    expect(existsSync(blobs) ? readdirSync(blobs) : []).toEqual([]);
  });

  it('sends HF_TOKEN as a bearer token and explains 401s', async () => {
    server = await startHubServer({ repos: [repo], token: 'hf_secret' });
    await expect(fetchHubFile(config(server.url), file('config.json'))).rejects.toThrow(
      /gated or private; set HF_TOKEN/,
    );
    const ok = await fetchHubFile(config(server.url, { token: 'hf_secret' }), file('config.json'));
    expect(JSON.parse(readFileSync(ok, 'utf8')).hidden_size).toBe(32);
  });

  it('takes an HF_ENDPOINT with user info as Basic credentials, never echoing the password (issue 47, item 11)', async () => {
    server = await startHubServer({ repos: [repo], basic: 'lab:s3cret' });
    const withUser = server.url.replace('http://', 'http://lab:s3cret@');
    const ok = await fetchHubFile(config(withUser), file('onnx/model.onnx'));
    expect(statSync(ok).size).toBeGreaterThan(0);
    const wrong = server.url.replace('http://', 'http://lab:wrong@');
    const err = (await fetchHubFile(config(wrong), file('config.json')).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/answered 401/);
    expect(err.message).not.toMatch(/wrong|s3cret/);
  });

  it('a restart without network: the cached files, one warning, not one a file (issue 48, item 6)', async () => {
    server = await startHubServer({ repos: [repo] });
    const cfg = config(server.url);
    const required = ['config.json', 'tokenizer.json', 'onnx/model.onnx'].map(file);
    const optional = ['modules.json', 'sentence_bert_config.json'].map(file);
    await fetchRepoFiles(cfg, required, optional);
    await server.close();
    server = undefined;
    const warnings: string[] = [];
    const log = { ...silentLogger, warn: (m: string) => warnings.push(m) };
    const got = await fetchRepoFiles({ ...cfg, endpoint: 'http://127.0.0.1:9', log }, required, optional);
    expect(got.required.every((p) => existsSync(p))).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /cannot reach http:\/\/127\.0\.0\.1:9: using the files cached in .*models--Xenova--e5-tiny/,
    );
  });

  it('a file neither reachable nor cached: the error names the cache it looked in (issue 48, item 5)', async () => {
    const cfg = config('http://127.0.0.1:9');
    const err = (await fetchHubFile(cfg, file('config.json')).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/network error reaching/);
    expect(err.message).toContain(join(cfg.cacheDir, 'models--Xenova--e5-tiny'));
    expect(err.message).toMatch(/HF_HOME/);
  });

  it('serves from the cache offline, and names what is missing otherwise', async () => {
    server = await startHubServer({ repos: [repo] });
    const cfg = config(server.url);
    await fetchHubFile(cfg, file('config.json'));
    await server.close();
    server = undefined;
    const offline = { ...cfg, offline: true };
    expect(await fetchHubFile(offline, file('config.json'))).toMatch(/config\.json$/);
    await expect(fetchHubFile(offline, file('vocab.txt'))).rejects.toThrow(
      /offline and Xenova\/e5-tiny\/vocab.txt is not in the cache/,
    );
    // online but unreachable: a cached file is still used
    expect(await fetchHubFile({ ...cfg, endpoint: 'http://127.0.0.1:9' }, file('config.json'))).toMatch(
      /config\.json$/,
    );
  });

  it('reports 404s with the file it looked for', async () => {
    server = await startHubServer({ repos: [repo] });
    await expect(fetchHubFile(config(server.url), file('onnx/nope.onnx'))).rejects.toThrow(/not found \(404\)/);
  });

  it('remembers a 404 (.no_exist, as huggingface_hub does), so an offline restart needs no hub', async () => {
    server = await startHubServer({ repos: [repo] });
    const cfg = config(server.url);
    expect(await fetchOptionalHubFile(cfg, file('modules.json'))).toBeUndefined();
    const marker = join(
      cfg.cacheDir,
      'models--Xenova--e5-tiny',
      '.no_exist',
      'c0ffee0000000000000000000000000000000000',
    );
    expect(existsSync(join(marker, 'modules.json'))).toBe(true);
    await server.close();
    server = undefined;
    // no network, not --offline: known absent, answered without a request (before: "network error")
    const unreachable = { ...cfg, endpoint: 'http://127.0.0.1:9' };
    expect(await fetchOptionalHubFile(unreachable, file('modules.json'))).toBeUndefined();
  });

  it('stops at the announced size when the server streams without end', async () => {
    server = await startHubServer({ repos: [repo], endless: ['onnx/model.onnx'] });
    const warnings: string[] = [];
    const cfg = config(server.url, { log: { ...silentLogger, warn: (m) => warnings.push(m) } });
    const t0 = Date.now();
    const path = await fetchHubFile(cfg, file('onnx/model.onnx'));
    expect(sha256(path)).toBe(sha256(sharedPath('models/tiny-e5/onnx/model.onnx')));
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(warnings.join('\n')).toMatch(/sent more than the .* it announced; stopped there/);
  });

  it('an aborted signal stops a download at once and keeps the partial file', async () => {
    server = await startHubServer({ repos: [repo], slowMs: { 'onnx/model.onnx': 20_000 } });
    const ctrl = new AbortController();
    const cfg = config(server.url, { signal: ctrl.signal });
    const got = fetchHubFile(cfg, file('onnx/model.onnx'));
    setTimeout(() => ctrl.abort(new Error('stopped by the test')), 1500);
    const t0 = Date.now();
    await expect(got).rejects.toThrow(/stopped by the test/);
    expect(Date.now() - t0).toBeLessThan(5000);
    const blobs = readdirSync(join(cfg.cacheDir, 'models--Xenova--e5-tiny', 'blobs'));
    expect(blobs.some((b) => b.endsWith('.incomplete'))).toBe(true);
    expect(blobs.some((b) => b.endsWith('.lock'))).toBe(false);
  });
});
