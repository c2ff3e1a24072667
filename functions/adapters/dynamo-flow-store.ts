import { CorruptItemError, type FlowDocument, type FlowStore } from '../core/index.ts';
import type { DynamoDocument } from './dynamo-document.ts';
import { DynamoServiceError } from './dynamo-errors.ts';

/** Flow control's items in the single table: one per key; `FLOW#` collides with no run, registry or memo prefix. */
export const flowPk = (key: string): string => `FLOW#${key}`;
const FLOW_SK = 'FLOW';

/**
 * Flow control's keys on the runs' DynamoDB table: an item per key with a version attribute; a write is a
 * PutItem conditional on the version it read (or on the item's absence), so two engines that race on a key
 * write one after the other, the loser reading again. Reads are strongly consistent, so a retry sees the winner.
 */
export class DynamoFlowStore implements FlowStore {
  constructor(private readonly options: { client: DynamoDocument; tableName: string }) {}

  async getFlow(key: string): Promise<FlowDocument | undefined> {
    const { Item } = await this.options.client.send('GetItem', {
      TableName: this.options.tableName,
      Key: { pk: flowPk(key), sk: FLOW_SK },
      ConsistentRead: true,
    });
    if (!Item) return undefined;
    try {
      return { version: Number(Item.v), body: JSON.parse(String(Item.body)) };
    } catch (error) {
      throw new CorruptItemError(`corrupt flow-control key ${key}: ${(error as Error).message}`);
    }
  }

  async putFlow(key: string, body: unknown, version: number): Promise<boolean> {
    try {
      await this.options.client.send('PutItem', {
        TableName: this.options.tableName,
        Item: { pk: flowPk(key), sk: FLOW_SK, v: version + 1, body: JSON.stringify(body) },
        ...(version === 0
          ? { ConditionExpression: 'attribute_not_exists(pk)' }
          : { ConditionExpression: '#v = :v', ExpressionAttributeNames: { '#v': 'v' }, ExpressionAttributeValues: { ':v': version } }),
      });
      return true;
    } catch (error) {
      if (error instanceof DynamoServiceError && error.name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }
}
