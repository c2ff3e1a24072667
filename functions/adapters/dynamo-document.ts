import { marshall, type marshallOptions, unmarshall, type unmarshallOptions } from '@aws-sdk/util-dynamodb';
import { DynamoServiceError } from './dynamo-errors.ts';
import type { DynamoJsonClient } from './dynamo-json-client.ts';

export type Item = Record<string, unknown>;
// Wire-format attribute values (`{ S: 'x' }`), as util-dynamodb types them.
type WireItem = ReturnType<typeof marshall>;

export interface TranslateConfig {
  marshallOptions: marshallOptions;
  unmarshallOptions: unmarshallOptions;
}

interface ConditionInput {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
}
export interface GetInput {
  TableName: string;
  Key: Item;
  ConsistentRead?: boolean;
}
export interface PutInput extends ConditionInput {
  TableName: string;
  Item: Item;
}
export interface DeleteInput extends ConditionInput {
  TableName: string;
  Key: Item;
  ReturnValues?: 'NONE' | 'ALL_OLD';
}
export interface QueryInput {
  TableName: string;
  IndexName?: string;
  KeyConditionExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
  ProjectionExpression?: string;
  ScanIndexForward?: boolean;
  ConsistentRead?: boolean;
  Limit?: number;
  ExclusiveStartKey?: Item;
}
export type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };
export interface BatchGetInput {
  RequestItems: Record<string, { Keys: Item[]; ConsistentRead?: boolean }>;
}
export interface BatchWriteInput {
  RequestItems: Record<string, WriteRequest[]>;
}

/**
 * What each operation takes and answers, in plain values: the document client's view of the
 * operations the stores send (attribute values marshalled and unmarshalled here, as lib-dynamodb does).
 */
export interface DocumentOperations {
  GetItem: { input: GetInput; output: { Item?: Item } };
  PutItem: { input: PutInput; output: { Attributes?: Item } };
  DeleteItem: { input: DeleteInput; output: { Attributes?: Item } };
  Query: { input: QueryInput; output: { Items?: Item[]; LastEvaluatedKey?: Item } };
  BatchGetItem: { input: BatchGetInput; output: { Responses?: Record<string, Item[]>; UnprocessedKeys?: BatchGetInput['RequestItems'] } };
  BatchWriteItem: { input: BatchWriteInput; output: { UnprocessedItems?: BatchWriteInput['RequestItems'] } };
}
export type DocumentOperation = keyof DocumentOperations;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
// The fields of requests and answers that hold one item, a key, or expression values.
const ITEM_FIELDS = ['Item', 'Key', 'ExpressionAttributeValues', 'ExclusiveStartKey', 'Attributes', 'LastEvaluatedKey'] as const;

/**
 * Plain JavaScript values over DynamoJsonClient, marshalled with @aws-sdk/util-dynamodb under the
 * store's options (RUN_STORE_TRANSLATE_CONFIG), as lib-dynamodb's document client did. A
 * DynamoServiceError keeps its name; an item it carries (a failed condition's, a cancellation
 * reason's) comes back unmarshalled.
 */
export class DynamoDocument {
  constructor(
    readonly client: DynamoJsonClient,
    private readonly translate: TranslateConfig,
  ) {}

  async send<O extends DocumentOperation>(operation: O, input: DocumentOperations[O]['input']): Promise<DocumentOperations[O]['output']> {
    let answer: Record<string, unknown>;
    try {
      answer = await this.client.send(
        operation,
        this.convert(input, (item) => marshall(item, this.translate.marshallOptions)),
      );
    } catch (error) {
      throw this.plainError(error);
    }
    return this.convert(answer, (item) => unmarshall(item as unknown as WireItem, this.translate.unmarshallOptions)) as DocumentOperations[O]['output'];
  }

  /** A copy of a request or answer with every item, key and value map converted; the rest as is. */
  private convert(message: object, item: (value: Item) => Item): Record<string, unknown> {
    const out: Record<string, unknown> = { ...message };
    for (const field of ITEM_FIELDS) {
      const value = out[field];
      if (isRecord(value)) out[field] = item(value);
    }
    if (Array.isArray(out.Items)) out.Items = out.Items.map((i: Item) => item(i));
    if (isRecord(out.Responses)) out.Responses = mapValues(out.Responses, (items) => (items as Item[]).map(item));
    for (const field of ['RequestItems', 'UnprocessedKeys', 'UnprocessedItems'] as const) {
      const tables = out[field];
      if (!isRecord(tables)) continue;
      out[field] = mapValues(tables, (table) =>
        Array.isArray(table)
          ? table.map((request: WriteRequest) =>
              'PutRequest' in request ? { PutRequest: { Item: item(request.PutRequest.Item) } } : { DeleteRequest: { Key: item(request.DeleteRequest.Key) } },
            )
          : { ...(table as object), Keys: ((table as { Keys: Item[] }).Keys ?? []).map(item) },
      );
    }
    return out;
  }

  private plainError(error: unknown): unknown {
    if (!(error instanceof DynamoServiceError) || (error.item === undefined && error.cancellationReasons === undefined)) return error;
    const plain = (wire: Item): Item => unmarshall(wire as unknown as WireItem, this.translate.unmarshallOptions);
    return new DynamoServiceError(error.name, error.message, {
      statusCode: error.statusCode,
      item: error.item && plain(error.item),
      cancellationReasons: error.cancellationReasons?.map((reason) => (reason.Item ? { ...reason, Item: plain(reason.Item) } : reason)),
      cause: error,
    });
  }
}

const mapValues = (record: Record<string, unknown>, f: (value: unknown) => unknown): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [k, f(v)]));
