import { StoreUnavailableError } from '../core/index.ts';
import type { DynamoDocument, Item, QueryInput, WriteRequest } from './dynamo-document.ts';

export type { Item } from './dynamo-document.ts';

const BATCH_GET_MAX = 100;
const BATCH_WRITE_MAX = 25;
const BATCH_RETRIES = 10;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const backoff = (attempt: number) => pause(Math.min(1000, 20 * 2 ** attempt));

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** Every item of the keys (missing ones left out), 100 keys per BatchGetItem, unprocessed keys retried with backoff. */
export async function batchGetAll(client: DynamoDocument, tableName: string, keys: readonly Item[]): Promise<Item[]> {
  const found: Item[] = [];
  for (const chunk of chunks(keys, BATCH_GET_MAX)) {
    let pending: Item[] = chunk;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > BATCH_RETRIES) throw new StoreUnavailableError(`BatchGetItem on ${tableName} left ${pending.length} keys unread`);
      if (attempt > 0) await backoff(attempt);
      const out = await client.send('BatchGetItem', { RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } });
      found.push(...(out.Responses?.[tableName] ?? []));
      pending = out.UnprocessedKeys?.[tableName]?.Keys ?? [];
    }
  }
  return found;
}

/** Puts every item, 25 per BatchWriteItem, unprocessed items retried with backoff. Keys must be distinct. */
export async function batchPutAll(client: DynamoDocument, tableName: string, items: readonly Item[]): Promise<void> {
  for (const chunk of chunks(items, BATCH_WRITE_MAX)) {
    let pending: WriteRequest[] = chunk.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > BATCH_RETRIES) throw new StoreUnavailableError(`BatchWriteItem on ${tableName} left ${pending.length} items unwritten`);
      if (attempt > 0) await backoff(attempt);
      const out = await client.send('BatchWriteItem', { RequestItems: { [tableName]: pending } });
      pending = (out.UnprocessedItems?.[tableName] ?? []).flatMap((request) => ('PutRequest' in request ? [request] : []));
    }
  }
}

/** Follows LastEvaluatedKey until the query is exhausted or `into` holds `limit` items. */
export async function queryAll(client: DynamoDocument, input: QueryInput, into: Item[] = [], limit = Number.POSITIVE_INFINITY): Promise<Item[]> {
  let startKey: Item | undefined;
  do {
    const remaining = limit - into.length;
    if (remaining <= 0) break;
    const out = await client.send('Query', {
      ...input,
      ...(Number.isFinite(remaining) && { Limit: remaining }),
      ...(startKey && { ExclusiveStartKey: startKey }),
    });
    into.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return into;
}
