import { StoreUnavailableError } from '../core/index.ts';
import { DynamoServiceError } from './dynamo-errors.ts';
import type { DynamoJsonClient } from './dynamo-json-client.ts';

/** Attribute names of the single table (the CDK stack reuses them). */
export const TABLE_KEYS = {
  pk: 'pk',
  sk: 'sk',
  /** TTL attribute, epoch seconds (optional on every item). */
  ttl: 'expiresAt',
  /** Random token of the last conditional write (see DynamoRunStore). */
  writeToken: 'wt',
} as const;

/** Global secondary indexes: runs by workflow and time (gsi1), recent runs across workflows by day (gsi2). */
export const GSI = {
  byWorkflow: { indexName: 'gsi1', pk: 'gsi1pk', sk: 'gsi1sk' },
  byDay: { indexName: 'gsi2', pk: 'gsi2pk', sk: 'gsi2sk' },
} as const;

/** How far back `listRuns` without a workflow name looks, in days (today included). */
export const RECENT_RUNS_LOOKBACK_DAYS = 31;

const IR_DIGITS = 6;
const STEP_DIGITS = 7;

const padded = (n: number, digits: number, what: string): string => {
  if (!Number.isInteger(n) || n < 0 || n >= 10 ** digits) {
    throw new RangeError(`${what} ${n} is outside 0..${10 ** digits - 1}, the range the table's sort key can order`);
  }
  return String(n).padStart(digits, '0');
};

export const STEP_PREFIX = 'STEP#';
export const EVENT_PREFIX = 'EVT#';
export const IR_PREFIX = 'IR#';

export const runPk = (runId: string): string => `RUN#${runId}`;
export const RUN_SK = 'RUN';
export const irSk = (version: number): string => `${IR_PREFIX}${padded(version, IR_DIGITS, 'IR version')}`;
export const stepSk = (seq: number): string => `${STEP_PREFIX}${padded(seq, STEP_DIGITS, 'step seq')}`;
export const eventSk = (key: string): string => `${EVENT_PREFIX}${key}`;

export const workflowGsiPk = (workflowName: string): string => `WF#${workflowName}`;
/** `yyyy-mm-dd` (UTC) of an epoch-ms time. */
export const dayOf = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);
export const dayGsiPk = (day: string): string => `RUNS#${day}`;
export const runGsiSk = (createdAt: number, runId: string): string => `${new Date(createdAt).toISOString()}#${runId}`;

/** The table as CreateTable wants it: on demand, string keys, both GSIs projecting everything. */
export const createTableInput = (tableName: string) => ({
  TableName: tableName,
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [TABLE_KEYS.pk, TABLE_KEYS.sk, GSI.byWorkflow.pk, GSI.byWorkflow.sk, GSI.byDay.pk, GSI.byDay.sk].map((name) => ({
    AttributeName: name,
    AttributeType: 'S' as const,
  })),
  KeySchema: [
    { AttributeName: TABLE_KEYS.pk, KeyType: 'HASH' },
    { AttributeName: TABLE_KEYS.sk, KeyType: 'RANGE' },
  ],
  GlobalSecondaryIndexes: [GSI.byWorkflow, GSI.byDay].map((index) => ({
    IndexName: index.indexName,
    KeySchema: [
      { AttributeName: index.pk, KeyType: 'HASH' as const },
      { AttributeName: index.sk, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'KEYS_ONLY' as const },
  })),
});

const isServiceError = (error: unknown, name: string): boolean => error instanceof DynamoServiceError && error.name === name;

/** Creates the table unless it exists, then waits until it is ACTIVE (local use; the CDK stack owns it on AWS). */
export async function ensureTable(client: DynamoJsonClient, tableName: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const { Table } = await client.send<{ Table?: { TableStatus?: string } }>('DescribeTable', { TableName: tableName });
      if (Table?.TableStatus === 'ACTIVE') return;
    } catch (error) {
      if (!isServiceError(error, 'ResourceNotFoundException')) throw error;
      try {
        await client.send('CreateTable', createTableInput(tableName));
      } catch (createError) {
        if (!isServiceError(createError, 'ResourceInUseException')) throw createError;
      }
    }
    if (Date.now() > deadline) throw new StoreUnavailableError(`table ${tableName} did not become ACTIVE within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
