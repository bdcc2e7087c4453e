#!/usr/bin/env python3
"""Drives a retriever-mcp server with FastMCP's Python client (PyPI `fastmcp`), the way
verl's MCP search tool does: a `fastmcp.Client` over legacy SSE with a bearer token in the
headers, and over Streamable HTTP. For test/e2e/fastmcp-client.test.ts.

  python fastmcp_client.py BASE_URL TOKEN QUERY

Prints one JSON object: for each transport, the tool names, the search's text blocks and
whether it was an error, and what a call without the token raised.
"""
import asyncio
import json
import sys

from fastmcp import Client
from fastmcp.client.transports import SSETransport, StreamableHttpTransport

base, token, query = sys.argv[1], sys.argv[2], sys.argv[3]
auth = {'Authorization': f'Bearer {token}'}


async def drive(transport):
    async with Client(transport) as client:
        tools = await client.list_tools()
        result = await client.call_tool('search', {'query': query, 'top_k': 3})
        corpora = await client.call_tool('list_corpora', {})
        return {
            'tools': sorted(t.name for t in tools),
            'text': [b.text for b in result.content if getattr(b, 'type', '') == 'text'],
            'is_error': result.is_error,
            'corpora': [b.text for b in corpora.content if getattr(b, 'type', '') == 'text'],
        }


async def refused(transport):
    try:
        async with Client(transport) as client:
            await client.list_tools()
        return None
    except Exception as err:  # what the client raises is its business: report it
        return f'{type(err).__name__}: {err}'


async def main():
    out = {
        'sse': await drive(SSETransport(f'{base}/sse', headers=auth)),
        'streamable_http': await drive(StreamableHttpTransport(f'{base}/mcp', headers=auth)),
        'no_token': await refused(StreamableHttpTransport(f'{base}/mcp')),
    }
    print(json.dumps(out))


asyncio.run(main())
