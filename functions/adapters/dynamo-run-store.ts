import { randomUUID } from 'node:crypto';
import type { IrVersionItem, NodeRecord, RunEvent, RunItem, RunStore, RunWriteCondition } from '../core/index.ts';
import { FlowmendError, StaleRunError, StoreUnavailableError, waitingAmong } from '../core/index.ts';
import { DynamoDocument, type Item, type QueryInput } from './dynamo-document.ts';
import { DynamoItemCodec, type Key, RUN_STORE_TRANSLATE_CONFIG } from './dynamo-item-codec.ts';
import type { DynamoJsonClient } from './dynamo-json-client.ts';
import { batchGetAll, batchPutAll, queryAll } from './dynamo-paging.ts';
import {
  dayGsiPk,
  dayOf,
  EVENT_PREFIX,
  eventSk,
  GSI,
  RECENT_RUNS_LOOKBACK_DAYS,
  runPk,
  STEP_PREFIX,
  stepSk,
  TABLE_KEYS,
  workflowGsiPk,
} from './table-schema.ts';

/** The document client the stores expect (numbers beyond 2^53 need its unmarshall options). */
export const createDocumentClient = (client: DynamoJsonClient): DynamoDocument => new DynamoDocument(client, RUN_STORE_TRANSLATE_CONFIG);

const WRITE_TOKEN = TABLE_KEYS.writeToken;
const DAY_MS = 86_400_000;
/** How many recent runs `listWaiting` looks through. */
const WAITING_SCAN = 1000;
interface Condition {
  expression: string;
  names: Record<string, string>;
  values?: Record<string, unknown>;
}

const isConditionFailure = (error: unknown): boolean => error instanceof Error && error.name === 'ConditionalCheckFailedException';

export interface DynamoRunStoreOptions {
  /** Best made with `createDocumentClient` (numbers beyond 2^53 need its unmarshall options). */
  client: DynamoDocument;
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
 * same call (the client's retry after a lost response) already wrote the item, the call succeeds.
 */
export class DynamoRunStore implements RunStore {
  private readonly client: DynamoDocument;
  private readonly tableName: string;
  private readonly now: () => number;
  private readonly codec: DynamoItemCodec;

  constructor(options: DynamoRunStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.now = options.now ?? Date.now;
    this.codec = new DynamoItemCodec({
      tableName: options.tableName,
      retentionDays: options.retentionDays,
      now: this.now,
      encoding: options.encoding ?? 'attributes',
    });
  }

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    const key = this.codec.runKey(run.runId);
    const item = this.codec.runItem(run);
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
    if (condition.eventSeq !== undefined) {
      // eventSeq defaults to 0, so an item written without it has 0.
      parts.push(condition.eventSeq === 0 ? '(attribute_not_exists(#eventSeq) OR #eventSeq = :eventSeq)' : '#eventSeq = :eventSeq');
      names['#eventSeq'] = 'eventSeq';
      values[':eventSeq'] = condition.eventSeq;
      if (condition.eventSeq === 0 && !condition.notExists && condition.ownerId === undefined && condition.seq === undefined) {
        parts.push('attribute_exists(#pk)');
        names['#pk'] = TABLE_KEYS.pk;
      }
    }
    const guard = parts.length > 0 ? { expression: parts.join(' AND '), names, values } : undefined;
    await this.put(key, item, guard, () => {
      const wanted = Object.entries(condition)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(', ');
      return new StaleRunError(`run ${run.runId} was moved on by another writer (condition ${wanted} failed)`, {
        details: { runId: run.runId, ...condition },
      });
    });
  }

  async getRun(runId: string): Promise<RunItem | undefined> {
    const item = await this.getItem(this.codec.runKey(runId));
    return item && this.codec.decodeRun(item, `run item of ${runId}`);
  }

  async putIrVersion(irVersion: IrVersionItem): Promise<void> {
    const key = this.codec.irKey(irVersion.runId, irVersion.version);
    const item = this.codec.irItem(irVersion);
    const guard = { expression: 'attribute_not_exists(#pk)', names: { '#pk': TABLE_KEYS.pk } };
    await this.put(key, item, guard, (current) => {
      if (current && this.codec.sameIr(current, irVersion)) return undefined;
      return new StaleRunError(`IR version ${irVersion.version} of run ${irVersion.runId} already exists with other content`, {
        details: { runId: irVersion.runId, version: irVersion.version },
      });
    });
  }

  async getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    const item = await this.getItem(this.codec.irKey(runId, version));
    return item && this.codec.decodeIr(item, `IR version ${version} of ${runId}`);
  }

  async putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    const key = this.codec.recordKey(step.runId, step.seq);
    const item = this.codec.recordItem(step);
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
    const items = steps.map((step) => this.codec.recordItem(step));
    await this.send('BatchWriteItem', () => batchPutAll(this.client, this.tableName, items));
  }

  async getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    const keys = [...new Set(seqs)].map((seq) => {
      const key = this.codec.recordKey(runId, seq);
      return { [TABLE_KEYS.pk]: key.pk, [TABLE_KEYS.sk]: key.sk };
    });
    const found = await this.send('BatchGetItem', () => batchGetAll(this.client, this.tableName, keys));
    return found.map((item) => this.codec.decodeRecord(item, runId));
  }

  async listRecords(runId: string, afterSeq = 0): Promise<NodeRecord[]> {
    // Record keys are zero-padded seqs after STEP#: those after `afterSeq` sort between its key and the prefix's end.
    const items = await this.queryAll({
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
      ExpressionAttributeNames: { '#pk': TABLE_KEYS.pk, '#sk': TABLE_KEYS.sk },
      ExpressionAttributeValues: { ':pk': runPk(runId), ':from': stepSk(afterSeq + 1), ':to': `${STEP_PREFIX}\uffff` },
      ConsistentRead: true,
    });
    return items.map((item) => this.codec.decodeRecord(item, runId));
  }

  async appendEvents(events: readonly RunEvent[]): Promise<void> {
    // BatchWriteItem rejects a request naming one key twice; the last event with a key wins.
    const byKey = new Map<string, Item>();
    for (const event of events) {
      const item = this.codec.eventItem(event);
      byKey.set(`${String(item[TABLE_KEYS.pk])}\n${String(item[TABLE_KEYS.sk])}`, item);
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
    return items.filter((item) => afterKey === undefined || item[TABLE_KEYS.sk] !== eventSk(afterKey)).map((item) => this.codec.decodeEvent(item, runId));
  }

  /**
   * The table has no index of waiting runs (AWS wakes each by its own schedule): this filters the runs of
   * the last RECENT_RUNS_LOOKBACK_DAYS days, enough for `runs --status waiting` on a DynamoDB store.
   */
  async listWaiting(options: { limit: number; dueBy?: number }): Promise<RunItem[]> {
    return waitingAmong(await this.listRuns({ limit: WAITING_SCAN }), options);
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
      return item ? [this.codec.decodeRun(item, `run item ${String(item[TABLE_KEYS.pk])}`)] : [];
    });
  }

  /** `stale` builds the error for a failed condition, or returns undefined when the stored item is acceptable. */
  private async put(key: Key, item: Item, guard: Condition | undefined, stale: (current: Item | undefined) => FlowmendError | undefined) {
    const token = randomUUID();
    try {
      await this.client.send('PutItem', {
        TableName: this.tableName,
        Item: { ...item, [WRITE_TOKEN]: token },
        ...(guard && {
          ConditionExpression: guard.expression,
          ExpressionAttributeNames: guard.names,
          ...(guard.values && Object.keys(guard.values).length > 0 && { ExpressionAttributeValues: guard.values }),
        }),
      });
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
      this.client.send('GetItem', { TableName: this.tableName, Key: { [TABLE_KEYS.pk]: key.pk, [TABLE_KEYS.sk]: key.sk }, ConsistentRead: true }),
    );
    return out.Item;
  }

  private queryAll(input: Omit<QueryInput, 'TableName'>, into?: Item[], limit?: number): Promise<Item[]> {
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
    return new StoreUnavailableError(`DynamoDB ${operation} on ${this.tableName} failed: ${message}`, { cause: error });
  }
}
