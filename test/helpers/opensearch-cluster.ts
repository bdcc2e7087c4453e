/**
 * A real OpenSearch cluster on this machine for the engine-backend tests and
 * benches: N nodes, each its own JVM process with its own data directory and
 * ports on 127.0.0.1, all cluster-manager eligible. Installed from Maven
 * Central by scripts/install-opensearch.sh on first use.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { REPO_ROOT } from './paths.js';

const INSTALLER = join(REPO_ROOT, 'scripts/install-opensearch.sh');

export interface ClusterNode {
  name: string;
  url: string;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** Starts the node's process (again), on its own data directory. */
  launch: () => Pick<ClusterNode, 'child' | 'exited'>;
}

export interface Cluster {
  nodes: ClusterNode[];
  urls: string[];
  /** SIGKILLs node i (no shutdown, as a crash or a pulled cable). */
  kill(i: number): Promise<void>;
  /** Starts node i again on its data and waits until the cluster is whole and green. */
  restart(i: number): Promise<void>;
  /** SIGKILLs every node (a whole-cluster outage), keeping their data. */
  killAll(): Promise<void>;
  /** Starts every node again on its data and waits until the cluster is whole and green. */
  restartAll(): Promise<void>;
  /** Stops every node and removes the data directories. */
  stop(): Promise<void>;
  /** The last `max` warnings, errors, elections and departures in node i's log, for failure reports. */
  events(i: number, max?: number): string;
}

/** Why a cluster cannot start here (no Java, no way to install), or undefined when it can. */
export function clusterUnavailable(): string | undefined {
  if (spawnSync('java', ['-version']).status !== 0) return 'no java on PATH';
  for (const tool of ['curl', 'unzip']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `no ${tool} on PATH`;
  }
  return undefined;
}

/** Installs OpenSearch + k-NN (once) and returns its home directory. */
export function installOpenSearch(): string {
  const r = spawnSync('bash', [INSTALLER], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`install-opensearch.sh failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim().split('\n').at(-1) as string;
}

function javaHome(): string {
  const java = spawnSync('sh', ['-c', 'readlink -f "$(command -v java)"'], { encoding: 'utf8' }).stdout.trim();
  return dirname(dirname(java));
}

/** OpenSearch refuses to run as root: nodes run as nobody when this process is root. */
const AS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

/**
 * The install folder as nobody can read it: when the repository sits under a
 * folder nobody may enter (/root), a copy under the temp folder.
 */
function readableHome(home: string): string {
  if (!AS_ROOT) return home;
  const probe = (dir: string) =>
    spawnSync('setpriv', [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      'test',
      '-x',
      join(dir, 'bin/opensearch'),
    ]).status === 0;
  if (probe(home)) return home;
  const copy = join(tmpdir(), `rmcp-${basename(home)}`);
  if (!probe(copy)) {
    rmSync(copy, { recursive: true, force: true });
    cpSync(home, copy, { recursive: true });
    chownTree(copy);
  }
  return copy;
}

export async function startCluster(o: { nodes: number; heapMb?: number; basePort?: number }): Promise<Cluster> {
  const home = readableHome(installOpenSearch());
  const base = o.basePort ?? 19200 + Math.floor(Math.random() * 400) * 2;
  const root = mkdtempSync(join(tmpdir(), 'rmcp-opensearch-'));
  const names = Array.from({ length: o.nodes }, (_, i) => `n${i + 1}`);
  const transport = names.map((_, i) => `127.0.0.1:${base + 1000 + i}`);
  const nodes: ClusterNode[] = [];
  const jvm = readFileSync(join(home, 'config/jvm.options'), 'utf8')
    .split('\n')
    .filter((l) => !/^-Xm[sx]/.test(l) && !l.includes('Xlog:gc'))
    .concat([`-Xms${o.heapMb ?? 512}m`, `-Xmx${o.heapMb ?? 512}m`])
    .join('\n');
  for (const [i, name] of names.entries()) {
    const dir = join(root, name);
    for (const sub of ['data', 'logs', 'config', 'tmp']) mkdirSync(join(dir, sub), { recursive: true });
    writeFileSync(join(dir, 'config/jvm.options'), `${jvm}\n`);
    writeFileSync(join(dir, 'config/log4j2.properties'), readFileSync(join(home, 'config/log4j2.properties')));
    writeFileSync(
      join(dir, 'config/opensearch.yml'),
      [
        `cluster.name: rmcp-test`,
        `node.name: ${name}`,
        `network.host: 127.0.0.1`,
        `http.port: ${base + i}`,
        `transport.port: ${base + 1000 + i}`,
        `path.data: ${join(dir, 'data')}`,
        `path.logs: ${join(dir, 'logs')}`,
        `discovery.seed_hosts: [${transport.map((t) => `"${t}"`).join(', ')}]`,
        `cluster.initial_cluster_manager_nodes: [${names.map((n) => `"${n}"`).join(', ')}]`,
        // a 2-core machine: keep the disk watermarks from blocking writes on a fullish disk
        `cluster.routing.allocation.disk.threshold_enabled: false`,
        // fault detection keeps its defaults (1 s checks, 10 s timeout, 3 tries): a killed node's
        // connections close and it is removed at once ("disconnected"); the timeouts only decide when
        // a live but slow node is evicted, and 2 s x 2 evicted live nodes under 256 clients on 2 cores
        // (a shard then had no copy left and the cluster stayed red: DESIGN.md, engine "Failover")
        '',
      ].join('\n'),
    );
    if (AS_ROOT) chownTree(i === 0 ? root : dir);
    const env = {
      ...process.env,
      OPENSEARCH_JAVA_HOME: process.env['OPENSEARCH_JAVA_HOME'] ?? javaHome(),
      OPENSEARCH_PATH_CONF: join(dir, 'config'),
      OPENSEARCH_TMPDIR: join(dir, 'tmp'),
    };
    const cmd = join(home, 'bin/opensearch');
    const launch = (): Pick<ClusterNode, 'child' | 'exited'> => {
      const child = AS_ROOT
        ? spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', cmd], {
            cwd: dir,
            env,
            stdio: 'ignore',
            detached: true,
          })
        : spawn(cmd, [], { cwd: dir, env, stdio: 'ignore', detached: true });
      return { child, exited: new Promise<void>((r) => child.on('exit', () => r())) };
    };
    nodes.push({ name, url: `http://127.0.0.1:${base + i}`, ...launch(), launch });
  }
  const cluster: Cluster = {
    nodes,
    urls: nodes.map((n) => n.url),
    kill: async (i) => {
      const n = nodes[i] as ClusterNode;
      killGroup(n.child, 'SIGKILL');
      await n.exited;
    },
    restart: async (i) => {
      const n = nodes[i] as ClusterNode;
      Object.assign(n, n.launch());
      await waitForHealth(n.url, o.nodes, root);
    },
    killAll: async () => {
      for (const n of nodes) killGroup(n.child, 'SIGKILL');
      await Promise.all(nodes.map((n) => n.exited));
    },
    restartAll: async () => {
      for (const n of nodes) Object.assign(n, n.launch());
      await waitForHealth(nodes[0]?.url as string, o.nodes, root);
    },
    events: (i, max = 20) => {
      const log = nodeLog(root, names[i] as string);
      if (log === undefined) return '(no log)';
      return log
        .split('\n')
        .filter(
          (l) => /^\[[^\]]+\]\[(WARN|ERROR)|node-left|elected-as/.test(l) && !/Falling back to single shard/.test(l),
        )
        .slice(-max)
        .map((l) => l.slice(0, 400))
        .join('\n');
    },
    stop: async () => {
      for (const n of nodes) killGroup(n.child, 'SIGTERM');
      await Promise.race([Promise.all(nodes.map((n) => n.exited)), sleep(20_000)]);
      for (const n of nodes) killGroup(n.child, 'SIGKILL');
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await waitForHealth(cluster.urls[0] as string, o.nodes, root);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/** Waits until the cluster has all its nodes and is green. */
async function waitForHealth(url: string, nodes: number, root: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${url}/_cluster/health?wait_for_nodes=${nodes}&wait_for_status=green&timeout=2s`);
      last = await r.text();
      if (r.status === 200) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(1000);
  }
  const logs = nodeLog(root, 'n1')?.slice(-3000) ?? '(no log)';
  throw new Error(`OpenSearch cluster did not turn green: ${last}\n${logs}`);
}

/** Node `name`'s log (cluster.name rmcp-test), or undefined before it wrote one. */
function nodeLog(root: string, name: string): string | undefined {
  const log = join(root, name, 'logs/rmcp-test.log');
  return existsSync(log) ? readFileSync(log, 'utf8') : undefined;
}

/** Cluster health (status and node count) from any node that answers. */
export async function clusterHealth(urls: readonly string[]): Promise<{ status: string; number_of_nodes: number }> {
  for (const u of urls) {
    try {
      const r = await fetch(`${u}/_cluster/health`);
      if (r.ok) return (await r.json()) as { status: string; number_of_nodes: number };
    } catch {
      // the next node
    }
  }
  throw new Error('no node answers');
}

/**
 * One line on the cluster as the first answering node sees it: health, the
 * elected manager and where each shard copy of `index` is (for failure reports).
 */
export async function clusterState(urls: readonly string[], index: string): Promise<string> {
  const get = async (u: string, path: string) => {
    const r = await fetch(`${u}${path}`, { signal: AbortSignal.timeout(3000) });
    return (await r.text()).trim().replace(/\s*\n\s*/g, '; ');
  };
  const seen: string[] = [];
  for (const u of urls) {
    try {
      const health = JSON.parse(await get(u, '/_cluster/health')) as Record<string, unknown>;
      const counts = ['status', 'number_of_nodes', 'active_shards', 'initializing_shards', 'unassigned_shards']
        .map((k) => `${k}=${String(health[k])}`)
        .join(' ');
      const manager = await get(u, '/_cat/cluster_manager?h=node');
      const shards = await get(u, `/_cat/shards/${index}?h=shard,prirep,state,node,unassigned.reason`);
      const unassigned = /UNASSIGNED/.test(shards)
        ? ` first unassigned: ${(await get(u, '/_cluster/allocation/explain')).slice(0, 400)}`
        : '';
      return `${u}: ${counts} manager=${manager || '(none)'} shards: ${shards}${unassigned}`;
    } catch (err) {
      seen.push(`${u}: ${(err as Error).message}`);
    }
  }
  return `no node answers (${seen.join('; ')})`;
}

/** One search of `index` on each node, as the server sends it (no partial results): status, time and shards. */
export async function searchProbe(urls: readonly string[], index: string): Promise<string> {
  const out: string[] = [];
  for (const u of urls) {
    const t0 = Date.now();
    try {
      const r = await fetch(
        `${u}/${index}/_search?allow_partial_search_results=false&search_type=dfs_query_then_fetch`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ size: 1, _source: false, query: { match: { contents: 'the news' } } }),
          signal: AbortSignal.timeout(5000),
        },
      );
      const body = (await r.json()) as { _shards?: unknown; error?: { type?: string; reason?: string } };
      const said = body.error ? `${body.error.type}: ${body.error.reason}` : JSON.stringify(body._shards);
      out.push(`${u} ${r.status} in ${Date.now() - t0} ms ${said.slice(0, 300)}`);
    } catch (err) {
      out.push(`${u} ${(err as Error).message} after ${Date.now() - t0} ms`);
    }
  }
  return out.join('; ');
}

/** The index in `cluster.nodes` of the elected cluster manager (the worst node to lose). */
export async function managerIndex(cluster: Cluster): Promise<number> {
  const r = await fetch(`${cluster.urls[0]}/_cat/cluster_manager?h=node`);
  const name = (await r.text()).trim();
  const i = cluster.nodes.findIndex((n) => n.name === name);
  if (i < 0) throw new Error(`no node is cluster manager (${name})`);
  return i;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function chownTree(dir: string): void {
  const r = spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
  if (r.status !== 0) chownSync(dir, NOBODY, NOBODY);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
