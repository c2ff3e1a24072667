import { CorruptItemError, type MemoEntry, MemoEntrySchema, type MemoStore } from '../core/index.ts';
import type { DynamoDocument } from './dynamo-document.ts';
import { TABLE_KEYS } from './table-schema.ts';

/** The memo cache's items in the single table: one per key; `MEMO#` collides with no run or registry prefix. */
export const memoPk = (key: string): string => `MEMO#${key}`;
const MEMO_SK = 'MEMO';
const BODY = 'body';

/**
 * The memo cache on the runs' DynamoDB table: an item per cache key carrying the table's TTL attribute,
 * so DynamoDB deletes it once it expires (and a read ignores one DynamoDB has not deleted yet).
 */
export class DynamoMemoStore implements MemoStore {
  constructor(private readonly options: { client: DynamoDocument; tableName: string }) {}

  async getMemo(key: string, now: number): Promise<MemoEntry | undefined> {
    const { Item } = await this.options.client.send('GetItem', { TableName: this.options.tableName, Key: { pk: memoPk(key), sk: MEMO_SK } });
    if (!Item) return undefined;
    const parsed = MemoEntrySchema.safeParse(JSON.parse(String(Item[BODY])));
    if (!parsed.success) throw new CorruptItemError(`corrupt memo entry ${key}: ${parsed.error.message}`);
    return parsed.data.expiresAt > now ? parsed.data : undefined;
  }

  async putMemo(entry: MemoEntry): Promise<void> {
    await this.options.client.send('PutItem', {
      TableName: this.options.tableName,
      Item: { pk: memoPk(entry.key), sk: MEMO_SK, [BODY]: JSON.stringify(entry), [TABLE_KEYS.ttl]: Math.ceil(entry.expiresAt / 1000) },
    });
  }
}
