import { gunzipSync, gzipSync } from 'node:zlib';
import {
  CorruptItemError,
  copyStoredValue,
  type IrVersionItem,
  IrVersionItemSchema,
  ItemTooLargeError,
  type NodeRecord,
  NodeRecordSchema,
  type RunEvent,
  RunEventSchema,
  type RunItem,
  RunItemSchema,
  sameStoredValue,
} from '../core/index.ts';
import type * as z from '../core/zod.ts';
import type { Item, TranslateConfig } from './dynamo-document.ts';
import { itemSize, MAX_ITEM_BYTES } from './dynamo-item-size.ts';
import { dayGsiPk, dayOf, eventSk, GSI, irSk, RUN_SK, runGsiSk, runPk, stepSk, TABLE_KEYS, workflowGsiPk } from './table-schema.ts';

/**
 * Marshalling the store relies on: plain maps, undefined dropped, and numbers read back as JS numbers
 * (the default turns integers beyond 2^53 into BigInt, which JSON and zod reject).
 */
export const RUN_STORE_TRANSLATE_CONFIG: TranslateConfig = {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false, allowImpreciseNumbers: true },
  unmarshallOptions: { wrapNumbers: (value: string) => Number(value) },
};

/** Attribute holding a run item or node record as JSON, in the `json` encoding. */
const BODY = 'body';
/** Attribute holding an IR version's workflow as gzipped JSON. */
const IR_GZ = 'irGz';
/** Room left in an item for the write token the store adds (its name and a UUID). */
const WRITE_TOKEN_BYTES = TABLE_KEYS.writeToken.length + 36;

export type Key = { pk: string; sk: string };

export interface ItemCodecOptions {
  tableName: string;
  /** When set, every item gets `expiresAt` this many days after it is written (the table's TTL). */
  retentionDays?: number | undefined;
  now: () => number;
  /** See `DynamoRunStoreOptions.encoding`. */
  encoding: 'attributes' | 'json';
}

/** A run item or node record as written (items from before the JSON body hold every field as an attribute). */
const decodeBody = (item: Item): Item => {
  const body = item[BODY];
  return typeof body === 'string' ? (JSON.parse(body) as Item) : item;
};

/** An IR version item with its workflow decoded (items written before compression hold `ir` as a map). */
const decodeIrBody = (item: Item): Item => {
  const packed = item[IR_GZ];
  if (!(packed instanceof Uint8Array)) return item;
  const { [IR_GZ]: _packed, ...rest } = item;
  return { ...rest, ir: JSON.parse(gunzipSync(packed).toString('utf8')) as unknown };
};

const stripKeys = (item: Item): Item => {
  const { [TABLE_KEYS.pk]: _pk, [TABLE_KEYS.sk]: _sk, [TABLE_KEYS.ttl]: _ttl, [TABLE_KEYS.writeToken]: _wt, ...rest } = item;
  return rest;
};

/**
 * How values of the run model become DynamoDB items and back (keys in table-schema.ts): one place for
 * the layout, the size limit and the schema check on read. The store (dynamo-run-store.ts) decides
 * which requests to send and under which conditions.
 */
export class DynamoItemCodec {
  private readonly json: boolean;

  constructor(private readonly options: ItemCodecOptions) {
    this.json = options.encoding === 'json';
  }

  runKey(runId: string): Key {
    return { pk: runPk(runId), sk: RUN_SK };
  }

  irKey(runId: string, version: number): Key {
    return { pk: runPk(runId), sk: irSk(version) };
  }

  recordKey(runId: string, seq: number): Key {
    return { pk: runPk(runId), sk: stepSk(seq) };
  }

  runItem(run: RunItem): Item {
    // As JSON, only what conditions read stays an attribute.
    const conditioned = { seq: run.seq, eventSeq: run.eventSeq, ...(run.owner ? { owner: { id: run.owner.id } } : {}) };
    return this.encode(run.runId, 'run item', this.runKey(run.runId), this.json ? conditioned : run, {
      ...(this.json ? { [BODY]: JSON.stringify(run) } : {}),
      [GSI.byWorkflow.pk]: workflowGsiPk(run.workflowName),
      [GSI.byWorkflow.sk]: runGsiSk(run.createdAt, run.runId),
      [GSI.byDay.pk]: dayGsiPk(dayOf(run.createdAt)),
      [GSI.byDay.sk]: runGsiSk(run.createdAt, run.runId),
    });
  }

  /**
   * A workflow is written once per version and read by key only, so it is stored gzipped: a 100-node
   * IR drops from ~20 to ~2 write units, which is most of what a repair-and-resume writes.
   */
  irItem(irVersion: IrVersionItem): Item {
    const { ir, ...rest } = irVersion;
    return this.encode(irVersion.runId, `IR version ${irVersion.version}`, this.irKey(irVersion.runId, irVersion.version), rest, {
      [IR_GZ]: gzipSync(JSON.stringify(ir)),
    });
  }

  /** A node record as an item (as JSON: its status, which conditions read, beside the record). */
  recordItem(record: NodeRecord): Item {
    const key = this.recordKey(record.runId, record.seq);
    const what = `step ${record.seq} (node ${record.nodeId})`;
    return this.json
      ? this.encode(record.runId, what, key, { status: record.status }, { [BODY]: JSON.stringify(record) })
      : this.encode(record.runId, what, key, record);
  }

  eventItem(event: RunEvent): Item {
    return this.encode(event.runId, `event ${event.key}`, { pk: runPk(event.runId), sk: eventSk(event.key) }, event);
  }

  decodeRun(item: Item, what: string): RunItem {
    return this.decode(RunItemSchema, decodeBody(item), what);
  }

  decodeIr(item: Item, what: string): IrVersionItem {
    return this.decode(IrVersionItemSchema, decodeIrBody(item), what);
  }

  decodeRecord(item: Item, runId: string): NodeRecord {
    return this.decode(NodeRecordSchema, decodeBody(item), `step ${String(item[TABLE_KEYS.sk])} of ${runId}`);
  }

  decodeEvent(item: Item, runId: string): RunEvent {
    return this.decode(RunEventSchema, item, `event ${String(item[TABLE_KEYS.sk])} of ${runId}`);
  }

  /** Whether a stored IR version item holds exactly this version (a retried write of the same content). */
  sameIr(stored: Item, irVersion: IrVersionItem): boolean {
    return sameStoredValue(stripKeys(decodeIrBody(stored)), copyStoredValue(irVersion));
  }

  /** The one place an item is built from a value: the size limit is checked here. */
  private encode(runId: string, what: string, key: Key, value: object, extra: Item = {}): Item {
    const item: Item = { ...copyStoredValue(value as Item), ...extra, [TABLE_KEYS.pk]: key.pk, [TABLE_KEYS.sk]: key.sk };
    if (this.options.retentionDays !== undefined) {
      item[TABLE_KEYS.ttl] = Math.floor(this.options.now() / 1000) + Math.round(this.options.retentionDays * 86_400);
    }
    const size = itemSize(item) + WRITE_TOKEN_BYTES;
    if (size > MAX_ITEM_BYTES) {
      throw new ItemTooLargeError(
        `run ${runId}: ${what} is ${(size / 1024).toFixed(1)} KB, over DynamoDB's 400 KB item limit; make the node's output smaller`,
        { details: { runId, item: what, sizeBytes: size, limitBytes: MAX_ITEM_BYTES } },
      );
    }
    return item;
  }

  private decode<S extends z.ZodMiniType>(schema: S, item: Item, what: string): z.infer<S> {
    const parsed = schema.safeParse(stripKeys(item));
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new CorruptItemError(`corrupt ${what} in table ${this.options.tableName}: ${issues.join('; ')}`, { cause: parsed.error });
  }
}
