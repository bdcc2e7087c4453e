import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { TOOL_VERSION } from '../../../version.js';

/**
 * `GET /`: one page to look at results with. No build step and no request
 * beyond this server (its Content-Security-Policy forbids any): the page
 * calls this server's own MCP endpoint, 2026-07-28 stateless, as an agent
 * would, and shows the fused list with each arm's rank and score side by
 * side, the text an agent reads, and a hit's neighbours on a click. A server
 * with a token serves it to `/?token=…` (a browser cannot send a header when
 * one types an address); the page then sends the token as a bearer header
 * and drops it from the address bar.
 */
export function sendPage(res: ServerResponse): void {
  const nonce = randomBytes(16).toString('base64');
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy':
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; ` +
      "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  });
  res.end(PAGE.replaceAll('{{NONCE}}', nonce).replace('{{VERSION}}', TOOL_VERSION));
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>retriever-mcp</title>
<style nonce="{{NONCE}}">
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#1d232b;color:#fff;padding:10px 18px;display:flex;gap:12px;align-items:baseline}
header b{font-size:16px} header span{opacity:.7;font-size:12px}
form{display:flex;flex-wrap:wrap;gap:8px;padding:14px 18px;background:#fff;border-bottom:1px solid #dde1e6}
input,select,button{font:inherit;padding:6px 8px;border:1px solid #c3c9d1;border-radius:4px}
#q{flex:1 1 360px} button{background:#2357d9;color:#fff;border-color:#2357d9;cursor:pointer}
main{padding:14px 18px} #status{color:#5b6570;margin:0 0 10px}
table{border-collapse:collapse;width:100%;background:#fff} th,td{border-bottom:1px solid #e4e7eb;padding:7px 8px;vertical-align:top;text-align:left}
th{font-size:12px;color:#5b6570;font-weight:600;background:#fafbfc} td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.title{font-weight:600} .meta{color:#5b6570;font-size:12px} .text{white-space:pre-wrap;margin-top:4px}
.none{color:#a0a8b2} a{color:#2357d9;cursor:pointer} .hood{background:#f3f6fc;padding:8px 10px;margin-top:6px;border-left:3px solid #2357d9}
.hood .cur{background:#fff4c2} .err{color:#b3261e} a.more{margin-left:4px}
</style></head><body>
<header><b>retriever-mcp</b><span>v{{VERSION}} · the fused list with both arms' ranks</span></header>
<form id="f">
<input id="q" name="q" placeholder="Ask the corpus…" autocomplete="off" required>
<select id="corpus" name="corpus" title="corpus"></select>
<select id="mode" name="mode" title="mode"><option value="">default mode</option><option>hybrid</option><option>bm25</option><option>dense</option></select>
<input id="k" name="k" type="number" min="1" max="100" value="10" title="hits" size="4">
<input id="source" name="source" placeholder="source" size="12" title="filter: source">
<input id="after" name="after" placeholder="after YYYY-MM-DD" size="14" title="filter: published_after">
<input id="before" name="before" placeholder="before YYYY-MM-DD" size="14" title="filter: published_before">
<button id="go" type="submit">Search</button>
</form>
<main><p id="status">Loading corpora…</p>
<table id="hits" hidden><thead><tr><th>#</th><th>score</th><th>BM25 rank</th><th>BM25 score</th><th>dense rank</th><th>dense score</th><th>passage</th></tr></thead><tbody></tbody></table>
</main>
<script nonce="{{NONCE}}">
'use strict';
const params = new URLSearchParams(location.search);
const token = params.get('token');
// a search is linkable: /?q=…&mode=…&corpus=…&k=… runs it (the token never stays in the address)
const linked = { q: params.get('q'), mode: params.get('mode'), corpus: params.get('corpus'), k: params.get('k') };
if (token !== null) history.replaceState(null, '', location.pathname + linkQuery());
function linkQuery() {
  const p = new URLSearchParams();
  for (const [key, v] of Object.entries(linked)) if (v) p.set(key, v);
  const q = p.toString();
  return q ? '?' + q : '';
}
let nextId = 1;
async function call(name, args) {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name };
  if (token) headers.authorization = 'Bearer ' + token;
  const res = await fetch('/mcp', { method: 'POST', headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args, _meta: meta } }) });
  let text = await res.text();
  if ((res.headers.get('content-type') || '').includes('text/event-stream')) {
    text = text.split('\\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).pop() || '';
  }
  const msg = JSON.parse(text);
  if (msg.error) throw new Error(msg.error.message);
  const r = msg.result;
  if (r.isError) throw new Error(r.content.map((c) => c.text).join(' '));
  return r;
}
const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
const num = (v, d) => (v === undefined ? el('span', 'none', '–') : document.createTextNode(d ? Number(v).toFixed(d) : String(v)));
const day = (v) => (/^\\d{4}-\\d{2}-\\d{2}T/.test(String(v)) ? String(v).slice(0, 10) : String(v));
function metaLine(h) {
  const m = h.metadata || {};
  const parts = ['id ' + h.id];
  if (h.corpus) parts.push('in ' + h.corpus);
  for (const k of ['source', 'category', 'published_at', 'pages']) if (m[k] !== undefined) parts.push(k === 'published_at' ? day(m[k]) : k + ' ' + m[k]);
  return parts.join(' · ');
}
// a long passage shows its first lines, and the rest on a click
const FOLD = 420;
function passage(text) {
  const box = el('div', 'text', text.length > FOLD ? text.slice(0, FOLD).replace(/\\s+\\S*$/, '') + ' … ' : text);
  if (text.length > FOLD) {
    const more = el('a', 'more', 'more');
    more.addEventListener('click', () => { box.textContent = text; });
    box.append(more);
  }
  return box;
}
async function neighbours(h, cell, link) {
  link.remove();
  const box = el('div', 'hood', 'Reading…');
  cell.append(box);
  try {
    const corpus = h.corpus || ($('corpus').value !== '*' ? $('corpus').value : '') || undefined;
    const r = await call('fetch', { id: h.id, around: 1, corpus });
    box.textContent = '';
    const chunks = r.structuredContent.chunks;
    if (chunks.length === 1) box.append(el('div', 'meta', 'The document has no other chunk.'));
    for (const c of chunks) {
      const p = el('div', c.id === h.id ? 'cur' : '');
      p.append(el('div', 'meta', c.id + ' (position ' + c.position + ')'), el('div', 'text', c.text));
      box.append(p);
    }
  } catch (e) { box.className = 'hood err'; box.textContent = String(e.message); }
}
function row(h, agentText) {
  const tr = el('tr');
  const cell = el('td');
  cell.append(el('div', 'title', h.title || h.doc_id), el('div', 'meta', metaLine(h)), passage(h.text));
  const link = el('a', 'neighbours', 'read the neighbours');
  link.addEventListener('click', () => neighbours(h, cell, link));
  const asRead = el('details');
  asRead.append(el('summary', 'meta', 'as the agent reads it'), el('div', 'text', agentText));
  cell.append(link, asRead);
  for (const [v, d] of [[h.rank], [h.score, 4], [h.bm25_rank], [h.bm25_score, 3], [h.dense_rank], [h.dense_score, 4]]) {
    const td = el('td', 'n'); td.append(num(v, d)); tr.append(td);
  }
  tr.append(cell);
  return tr;
}
async function search(ev) {
  if (ev) ev.preventDefault();
  if (!$('q').value.trim()) return;
  const filter = {};
  if ($('source').value) filter.source = $('source').value;
  if ($('after').value) filter.published_after = $('after').value;
  if ($('before').value) filter.published_before = $('before').value;
  const args = { query: $('q').value, top_k: Number($('k').value) || 10 };
  if ($('mode').value) args.mode = $('mode').value;
  if ($('corpus').value) args.corpus = $('corpus').value;
  if (Object.keys(filter).length) args.filter = filter;
  linked.q = args.query; linked.mode = args.mode || null; linked.corpus = args.corpus || null;
  linked.k = args.top_k !== 10 ? String(args.top_k) : null;
  history.replaceState(null, '', location.pathname + linkQuery());
  $('status').className = ''; $('status').textContent = 'Searching…';
  const t = performance.now();
  try {
    const r = await call('search', args);
    const s = r.structuredContent;
    // the text blocks an agent reads, one a hit (a note, when there is one, comes first)
    const blocks = r.content.filter((c) => c.type === 'text' && /^Doc \\d/.test(c.text)).map((c) => c.text);
    const body = $('hits').tBodies[0];
    body.textContent = '';
    s.results.forEach((h, i) => body.append(row(h, blocks[i] ?? '')));
    $('hits').hidden = s.results.length === 0;
    $('status').textContent = s.results.length + ' hits from ' + (s.corpus === '*' ? 'every corpus' : s.corpus) + ' (' + s.mode + ') in ' + Math.round(performance.now() - t) + ' ms' + (s.note ? '. ' + s.note : '');
  } catch (e) { $('status').className = 'err'; $('status').textContent = e.message; }
}
async function start() {
  try {
    const r = await call('list_corpora', {});
    const corpora = r.structuredContent.corpora;
    for (const c of corpora) {
      const o = el('option', '', c.name + (c.status.state === 'ready' ? '' : ' (' + c.status.state + ')'));
      o.value = c.name; $('corpus').append(o);
    }
    if (corpora.length > 1) { const all = el('option', '', 'every corpus'); all.value = '*'; $('corpus').append(all); }
    $('status').textContent = 'Ready.';
    if (linked.corpus) $('corpus').value = linked.corpus;
    if (linked.mode) $('mode').value = linked.mode;
    if (linked.k) $('k').value = linked.k;
    if (linked.q) { $('q').value = linked.q; await search(); }
  } catch (e) { $('status').className = 'err'; $('status').textContent = e.message; }
}
$('f').addEventListener('submit', search);
start();
</script></body></html>
`;
