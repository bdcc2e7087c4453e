import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { spawn, spawnSync } from 'node:child_process';
import { BIN } from './paths.js';

/**
 * Which real client a test drives: the 1.x SDK's (MCP 2025-11-25, `initialize`
 * and a session) or the v2 SDK's pinned to the 2026-07-28 revision
 * (`server/discover`, a `_meta` envelope on every request, no session).
 */
export type ClientEra = '2025' | '2026';
export const CLIENT_ERAS: ClientEra[] = ['2025', '2026'];

const PIN_2026 = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

/** A real MCP client connected to the built server binary over stdio. */
export async function connectStdio(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  era: ClientEra = '2025',
): Promise<{ client: Client; stderr: () => string; close: () => Promise<void> }> {
  const params = {
    command: process.execPath,
    args: [BIN.server, ...args],
    stderr: 'pipe' as const,
    env: { ...(process.env as Record<string, string>), ...(env as Record<string, string>) },
  };
  let err = '';
  if (era === '2026') {
    const transport = new ModernStdio(params);
    transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const client = new ModernClient({ name: 'retriever-mcp-tests', version: '0.0.0' }, PIN_2026);
    await client.connect(transport);
    if (client.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate 2026-07-28');
    // the tests read the same fields of either client's results
    return { client: client as unknown as Client, stderr: () => err, close: () => client.close() };
  }
  const transport = new StdioClientTransport(params);
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'retriever-mcp-tests', version: '0.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err, close: () => client.close() };
}

/** The v2 client in 2026-07-28 mode over Streamable HTTP (stateless: no session). */
export async function connectHttp2026(url: string, headers: Record<string, string> = {}): Promise<ModernClient> {
  const client = new ModernClient({ name: 'retriever-mcp-tests', version: '0.0.0' }, PIN_2026);
  await client.connect(new ModernHttp(new URL(url), { requestInit: { headers } }));
  if (client.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate 2026-07-28');
  return client;
}

/** Runs a bin to completion and returns its exit code and output. */
export function runBin(bin: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Like runBin, without blocking this process's event loop (for in-process test servers). */
export function runBinAsync(
  bin: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export interface ToolText {
  content?: Array<{ type: string; text?: string }>;
  isError?: boolean;
  structuredContent?: unknown;
}

export function textOf(result: unknown): string {
  return ((result as ToolText).content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('\n');
}
