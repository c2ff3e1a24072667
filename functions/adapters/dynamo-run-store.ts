import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, type QueryCommandInput, type TranslateConfig } from '@aws-sdk/lib-dynamodb';
import type { z } from 'zod';
import { FlowmendError, StaleRunError, StoreError } from '../core/errors.ts';
import {
  type IrVersionItem,
  IrVersionItemSchema,
  type RunEvent,
  RunEventSchema,
  type RunItem,
  RunItemSchema,
  type NodeRecord,
  NodeRecordSchema,
} from '../core/run-model.ts';
import type { RunStore, RunWriteCondition } from '../core/run-store.ts';
import { copyStoredValue, sameStoredValue } from '../core/stored-value.ts';
import { itemSize, MAX_ITEM_BYTES } from './dynamo-item-size.ts';
import { batchGetAll, batchPutAll, type Item, queryAll } from './dynamo-paging.ts';
import {
  dayGsiPk,
  dayOf,
  EVENT_PREFIX,
  eventSk,
  GSI,
  irSk,
  RECENT_RUNS_LOOKBACK_DAYS,
  RUN_SK,
  runGsiSk,
  runPk,
  STEP_PREFIX,
  stepSk,
  TABLE_KEYS,
  workflowGsiPk,
} from './table-schema.ts';

/** Attribute holding a run item or step record as JSON, in the `json` encoding. */
const BODY = 'body';

/** A run item or step record as written (items from before the JSON body hold every field as an attribute). */
const decodeBody = (item: Item): Item => {
  const body = item[BODY];
  return typeof body === 'string' ? (JSON.parse(body) as Item) : item;
};

/** Attribute holding an IR version's workflow as gzipped JSON. */
const IR_GZ = 'irGz';

/** An IR version item with its workflow decoded (items written before compression hold `ir` as a map). */
const decodeIr = (item: Item): Item => {
  const packed = item[IR_GZ];
  if (!(packed instanceof Uint8Array)) return item;
  const { [IR_GZ]: _packed, ...rest } = item;
  return { ...rest, ir: JSON.parse(gunzipSync(packed).toString('utf8')) as unknown };
};

/**
 * Marshalling the store relies on: plain maps, undefined dropped, and numbers read back as JS numbers
 * (the default turns integers beyond 2^53 into BigInt, which JSON and zod reject).
 */
export const RUN_STORE_TRANSLATE_CONFIG: TranslateConfig = {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false, allowImpreciseNumbers: true },
  unmarshallOptions: { wrapNumbers: (value: string) => Number(value) },
};

/** The document client the store expects. */
export const createDocumentClient = (client: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(client, RUN_STORE_TRANSLATE_CONFIG);

const WRITE_TOKEN = TABLE_KEYS.writeToken;
const DAY_MS = 86_400_000;
type Key = { pk: string; sk: string };
interface Condition {
  expression: string;
  names: Record<string, string>;
  values?: Record<string, unknown>;
}

const isConditionFailure = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

export interface DynamoRunStoreOptions {
  /** Best made with `createDocumentClient` (numbers beyond 2^53 need its unmarshall options). */
  client: DynamoDBDocumentClient;
  tableName: string;
  /** When set, every item gets `expiresAt` this many days after it is written (the table's TTL). */
  retentionDays?: number;
  now?: () => number;
  /**
   * How run items and step records are laid out. `attributes` (the default, for DynamoDB): every field
   * an attribute; DynamoDB bills by size and encodes numbers compactly, so this is ~35% smaller.
   * `json`: one JSON attribute beside those conditions read; dynalite writes it in half the time,
   * because its cost follows the number of attributes. Reads understand both.
   */
  encoding?: 'attributes' | 'json';
}

/**
 * RunStore on one DynamoDB table (keys in table-schema.ts), single-item conditional writes only.
 * A conditional put carries a write token: when its condition fails because an earlier attempt of the
 * same call (an SDK retry after a lost response) already wrote the item, the call succeeds.
 */
export class DynamoRunStore implements RunStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly retentionDays: number | undefined;
  private readonly now: () => number;
  private readonly json: boolean;

  constructor(options: DynamoRunStoreOptions) {
    this.json = options.encoding === 'json';
    this.client = options.client;
    this.tableName = options.tableName;
    this.retentionDays = options.retentionDays;
    this.now = options.now ?? Date.now;
  }

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    const key = { pk: runPk(run.runId), sk: RUN_SK };
    // As JSON, only what conditions read stays an attribute.
    const conditioned = { seq: run.seq, ...(run.owner ? { owner: { id: run.owner.id } } : {}) };
    const item = this.serialise(run.runId, 'run item', key, this.json ? conditioned : run, {
      ...(this.json ? { [BODY]: JSON.stringify(run) } : {}),
      [GSI.byWorkflow.pk]: workflowGsiPk(run.workflowName),
      [GSI.byWorkflow.sk]: runGsiSk(run.createdAt, run.runId),
      [GSI.byDay.pk]: dayGsiPk(dayOf(run.createdAt)),
      [GSI.byDay.sk]: runGsiSk(run.createdAt, run.runId),
    });
    const parts: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    if (condition.notExists) {
      parts.push('attribute_not_exists(#pk)');
      names['#pk'] = TABLE_KEYS.pk;
    }
    if (condition.ownerId !== undefined) {
      parts.push('#owner.#ownerId = :ownerId');
      Object.assign(names, { '#owner': 'owner', '#ownerId': 'id' });
      values[':ownerId'] = condition.ownerId;
    }
    if (condition.seq !== undefined) {
      parts.push('#seq = :seq');
      names['#seq'] = 'seq';
      values[':seq'] = condition.seq;
    }
    const guard = parts.length > 0 ? { expression: parts.join(' AND '), names, values } : undefined;
    await this.put(key, item, guard, () => {
      const wanted = Object.entries(condition).map(([k, v]) => `${k}=${String(v)}`).join(', ');
      return new StaleRunError(`run ${run.runId} was moved on by another writer (condition ${wanted} failed)`, {
        details: { runId: run.runId, ...condition },
      });
    });
  }

  async getRun(runId: string): Promise<RunItem | undefined> {
    const item = await this.getItem({ pk: runPk(runId), sk: RUN_SK });
    return item && this.parse(RunItemSchema, decodeBody(item), `run item of ${runId}`);
  }

  async putIrVersion(irVersion: IrVersionItem): Promise<void> {
    const key = { pk: runPk(irVersion.runId), sk: irSk(irVersion.version) };
    // A workflow is written once per version and read by key only, so it is stored gzipped: a 100-node
    // IR drops from ~20 to ~2 write units, which is most of what a repair-and-resume writes.
    const { ir, ...rest } = irVersion;
    const item = this.serialise(irVersion.runId, `IR version ${irVersion.version}`, key, rest, { [IR_GZ]: gzipSync(JSON.stringify(ir)) });
    const guard = { expression: 'attribute_not_exists(#pk)', names: { '#pk': TABLE_KEYS.pk } };
    await this.put(key, item, guard, (current) => {
      if (current && sameStoredValue(this.stripKeys(decodeIr(current)), copyStoredValue(irVersion))) return undefined;
      return new StaleRunError(`IR version ${irVersion.version} of run ${irVersion.runId} already exists with other content`, {
        details: { runId: irVersion.runId, version: irVersion.version },
      });
    });
  }

  async getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    const item = await this.getItem({ pk: runPk(runId), sk: irSk(version) });
    return item && this.parse(IrVersionItemSchema, decodeIr(item), `IR version ${version} of ${runId}`);
  }

  async putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    const key = { pk: runPk(step.runId), sk: stepSk(step.seq) };
    const item = this.recordItem(step);
    const guard: Condition | undefined =
      expectStatus === null
        ? { expression: 'attribute_not_exists(#pk)', names: { '#pk': TABLE_KEYS.pk } }
        : expectStatus === undefined
          ? undefined
          : { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': expectStatus } };
    await this.put(key, item, guard, (current) => {
      const found = current ? `is ${String(current.status)}` : 'does not exist';
      const wanted = expectStatus === null ? 'absent' : expectStatus;
      return new StaleRunError(`step ${step.seq} of run ${step.runId} ${found}, expected ${wanted}`, {
        details: { runId: step.runId, seq: step.seq, status: current?.status },
      });
    });
  }

  async putRecords(steps: readonly NodeRecord[]): Promise<void> {
    if (steps.length === 0) return;
    const items = steps.map((step) => this.recordItem(step));
    await this.send('BatchWriteItem', () => batchPutAll(this.client, this.tableName, items));
  }

  async getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    const keys = [...new Set(seqs)].map((seq) => ({ [TABLE_KEYS.pk]: runPk(runId), [TABLE_KEYS.sk]: stepSk(seq) }));
    const found = await this.send('BatchGetItem', () => batchGetAll(this.client, this.tableName, keys));
    return found.map((item) => this.parse(NodeRecordSchema, decodeBody(item), `step ${String(item[TABLE_KEYS.sk])} of ${runId}`));
  }

  async listRecords(runId: string): Promise<NodeRecord[]> {
    const items = await this.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': TABLE_KEYS.pk, '#sk': TABLE_KEYS.sk },
      ExpressionAttributeValues: { ':pk': runPk(runId), ':prefix': STEP_PREFIX },
      ConsistentRead: true,
    });
    return items.map((item) => this.parse(NodeRecordSchema, decodeBody(item), `step ${String(item[TABLE_KEYS.sk])} of ${runId}`));
  }

  async appendEvents(events: readonly RunEvent[]): Promise<void> {
    // BatchWriteItem rejects a request naming one key twice; the last event with a key wins.
    const byKey = new Map<string, Item>();
    for (const event of events) {
      const key = { pk: runPk(event.runId), sk: eventSk(event.key) };
      byKey.set(`${key.pk}\n${key.sk}`, this.serialise(event.runId, `event ${event.key}`, key, event));
    }
    await this.send('BatchWriteItem', () => batchPutAll(this.client, this.tableName, [...byKey.values()]));
  }

  async listEvents(runId: string, afterKey?: string): Promise<RunEvent[]> {
    // A sort key condition cannot combine `>` with begins_with: BETWEEN bounds the EVT# range ('$' follows '#').
    const range =
      afterKey === undefined
        ? { KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)', values: { ':prefix': EVENT_PREFIX } }
        : { KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to', values: { ':from': eventSk(afterKey), ':to': 'EVT$' } };
    const items = await this.queryAll({
      KeyConditionExpression: range.KeyConditionExpression,
      ExpressionAttributeNames: { '#pk': TABLE_KEYS.pk, '#sk': TABLE_KEYS.sk },
      ExpressionAttributeValues: { ':pk': runPk(runId), ...range.values },
      ConsistentRead: true,
    });
    return items
      .filter((item) => afterKey === undefined || item[TABLE_KEYS.sk] !== eventSk(afterKey))
      .map((item) => this.parse(RunEventSchema, item, `event ${String(item[TABLE_KEYS.sk])} of ${runId}`));
  }

  async listRuns(options: { limit: number; workflowName?: string }): Promise<RunItem[]> {
    const found: Item[] = [];
    const fill = async (index: { indexName: string; pk: string }, pk: string) => {
      await this.queryAll(
        {
          IndexName: index.indexName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': index.pk },
          ExpressionAttributeValues: { ':pk': pk },
          ScanIndexForward: false,
        },
        found,
        options.limit,
      );
    };
    if (options.workflowName !== undefined) {
      await fill(GSI.byWorkflow, workflowGsiPk(options.workflowName));
    } else {
      const today = this.now();
      for (let d = 0; d < RECENT_RUNS_LOOKBACK_DAYS && found.length < options.limit; d++) {
        await fill(GSI.byDay, dayGsiPk(dayOf(today - d * DAY_MS)));
      }
    }
    // The indexes hold keys only (a run item is rewritten on every step; copying it into two indexes
    // tripled the write cost), so the runs are read by key, in index order.
    const keys = found.slice(0, options.limit).map((item) => ({ [TABLE_KEYS.pk]: item[TABLE_KEYS.pk], [TABLE_KEYS.sk]: item[TABLE_KEYS.sk] }));
    if (keys.length === 0) return [];
    const items = await this.send('BatchGetItem', () => batchGetAll(this.client, this.tableName, keys));
    const byPk = new Map(items.map((item) => [String(item[TABLE_KEYS.pk]), item]));
    return keys.flatMap((key) => {
      const item = byPk.get(String(key[TABLE_KEYS.pk]));
      return item ? [this.parse(RunItemSchema, decodeBody(item), `run item ${String(item[TABLE_KEYS.pk])}`)] : [];
    });
  }

  /** A step record as an item (as JSON: its status, which conditions read, beside the record). */
  private recordItem(step: NodeRecord): Item {
    const key = { pk: runPk(step.runId), sk: stepSk(step.seq) };
    const what = `step ${step.seq} (node ${step.nodeId})`;
    return this.json ? this.serialise(step.runId, what, key, { status: step.status }, { [BODY]: JSON.stringify(step) }) : this.serialise(step.runId, what, key, step);
  }

  /** The one place an item is built from a value: the place to spill large outputs to S3 later. */
  private serialise(runId: string, what: string, key: Key, value: object, extra: Item = {}): Item {
    const item: Item = { ...copyStoredValue(value as Item), ...extra, [TABLE_KEYS.pk]: key.pk, [TABLE_KEYS.sk]: key.sk };
    if (this.retentionDays !== undefined) {
      item[TABLE_KEYS.ttl] = Math.floor(this.now() / 1000) + Math.round(this.retentionDays * 86_400);
    }
    const size = itemSize(item) + WRITE_TOKEN.length + 36;
    if (size > MAX_ITEM_BYTES) {
      throw new StoreError(
        `run ${runId}: ${what} is ${(size / 1024).toFixed(1)} KB, over DynamoDB's 400 KB item limit; make the node's output smaller`,
        { details: { runId, item: what, sizeBytes: size, limitBytes: MAX_ITEM_BYTES } },
      );
    }
    return item;
  }

  private stripKeys(item: Item): Item {
    const { [TABLE_KEYS.pk]: _pk, [TABLE_KEYS.sk]: _sk, [TABLE_KEYS.ttl]: _ttl, [WRITE_TOKEN]: _wt, ...rest } = item;
    return rest;
  }

  private parse<S extends z.ZodType>(schema: S, item: Item, what: string): z.infer<S> {
    const parsed = schema.safeParse(this.stripKeys(item));
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new StoreError(`corrupt ${what} in table ${this.tableName}: ${issues.join('; ')}`, { cause: parsed.error });
  }

  /** `stale` builds the error for a failed condition, or returns undefined when the stored item is acceptable. */
  private async put(key: Key, item: Item, guard: Condition | undefined, stale: (current: Item | undefined) => FlowmendError | undefined) {
    const token = randomUUID();
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...item, [WRITE_TOKEN]: token },
          ...(guard && {
            ConditionExpression: guard.expression,
            ExpressionAttributeNames: guard.names,
            ...(guard.values && Object.keys(guard.values).length > 0 && { ExpressionAttributeValues: guard.values }),
          }),
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw this.storeError('PutItem', error);
      const current = await this.getItem(key);
      if (current?.[WRITE_TOKEN] === token) return;
      const failure = stale(current);
      if (failure) throw failure;
    }
  }

  private async getItem(key: Key): Promise<Item | undefined> {
    const out = await this.send('GetItem', () =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: { [TABLE_KEYS.pk]: key.pk, [TABLE_KEYS.sk]: key.sk }, ConsistentRead: true })),
    );
    return out.Item;
  }

  private queryAll(input: Omit<QueryCommandInput, 'TableName'>, into?: Item[], limit?: number): Promise<Item[]> {
    return this.send('Query', () => queryAll(this.client, { ...input, TableName: this.tableName }, into, limit));
  }

  private async send<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.storeError(operation, error);
    }
  }

  private storeError(operation: string, error: unknown): FlowmendError {
    if (error instanceof FlowmendError) return error;
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return new StoreError(`DynamoDB ${operation} on ${this.tableName} failed: ${message}`, { cause: error });
  }
}
