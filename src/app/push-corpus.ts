import { connectEngine } from '../engine/opensearch/client.js';
import { pushCorpus, type PushOptions, type PushReport } from '../engine/opensearch/push.js';

/** build-index --backend: pushes the local index `name` to the cluster at `nodes` (resuming an earlier push). */
export async function pushToEngine(o: PushOptions & { nodes: string[] }): Promise<PushReport> {
  const client = connectEngine({ nodes: o.nodes });
  try {
    return await pushCorpus(client, o);
  } finally {
    await client.close();
  }
}
