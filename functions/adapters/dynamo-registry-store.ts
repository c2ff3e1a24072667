import type { IdempotencyClaim, RegistryStore, Workflow } from '../core/index.ts';
import {
  type IdempotencyRecord,
  type Schedule,
  ScheduleSchema,
  StoreUnavailableError,
  type WorkflowSummary,
  type WorkflowVersion,
  WorkflowVersionSchema,
} from '../core/index.ts';
import type { DynamoDocument, Item } from './dynamo-document.ts';
import { queryAll } from './dynamo-paging.ts';
import { TABLE_KEYS } from './table-schema.ts';

/** Key prefixes of the registry in the single table; none collides with a run's `RUN#`. */
export const REGISTRY_KEYS = {
  workflowPk: (name: string) => `WFDEF#${name}`,
  versionSk: (version: number) => `V#${String(version).padStart(6, '0')}`,
  /** One partition lists every registered name (a registry holds hundreds, not millions). */
  workflowIndexPk: 'WFDEFS',
  schedulePk: 'SCHEDULES',
  idempotencyPk: (key: string) => `IDEM#${key}`,
  idempotencySk: 'IDEM',
} as const;

const BODY = 'body';
/** How often `putWorkflow` retries after losing a version number to a concurrent PUT of the same name. */
const VERSION_RETRIES = 20;

const isConditionFailure = (error: unknown): boolean => error instanceof Error && error.name === 'ConditionalCheckFailedException';
const bodyOf = (item: Item): unknown => JSON.parse(String(item[BODY]));

/**
 * RegistryStore on the runs' DynamoDB table: a version is a conditional insert of its own item (so two
 * PUTs of one name get two versions), an idempotency key a conditional insert that an expired record
 * does not block. Items carry the table's TTL attribute where they expire.
 */
export class DynamoRegistryStore implements RegistryStore {
  constructor(private readonly options: { client: DynamoDocument; tableName: string }) {}

  private get client(): DynamoDocument {
    return this.options.client;
  }

  private get table(): string {
    return this.options.tableName;
  }

  async putWorkflow(name: string, workflow: Workflow, now: number): Promise<WorkflowVersion> {
    for (let attempt = 0; attempt < VERSION_RETRIES; attempt += 1) {
      const version = ((await this.getWorkflow(name))?.version ?? 0) + 1;
      const item: WorkflowVersion = { name, version, workflow, createdAt: now };
      try {
        await this.client.send('PutItem', {
          TableName: this.table,
          Item: { pk: REGISTRY_KEYS.workflowPk(name), sk: REGISTRY_KEYS.versionSk(version), [BODY]: JSON.stringify(item) },
          ConditionExpression: 'attribute_not_exists(pk)',
        });
      } catch (error) {
        if (isConditionFailure(error)) continue;
        throw error;
      }
      // The index entry only moves forward, so a slower writer of an older version cannot move it back.
      await this.client
        .send('PutItem', {
          TableName: this.table,
          Item: {
            pk: REGISTRY_KEYS.workflowIndexPk,
            sk: name,
            latestVersion: version,
            updatedAt: now,
            ...(workflow.description ? { description: workflow.description } : {}),
          },
          ConditionExpression: 'attribute_not_exists(pk) OR latestVersion < :v',
          ExpressionAttributeValues: { ':v': version },
        })
        .catch((error: unknown) => {
          if (!isConditionFailure(error)) throw error;
        });
      return item;
    }
    throw new StoreUnavailableError(`workflow ${name}: ${VERSION_RETRIES} concurrent PUTs took every version number this one tried; retry`);
  }

  async getWorkflow(name: string, version?: number): Promise<WorkflowVersion | undefined> {
    if (version !== undefined) {
      const { Item: item } = await this.client.send('GetItem', {
        TableName: this.table,
        Key: { pk: REGISTRY_KEYS.workflowPk(name), sk: REGISTRY_KEYS.versionSk(version) },
        ConsistentRead: true,
      });
      return item && WorkflowVersionSchema.parse(bodyOf(item));
    }
    const [latest] = await queryAll(
      this.client,
      {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :v)',
        ExpressionAttributeValues: { ':pk': REGISTRY_KEYS.workflowPk(name), ':v': 'V#' },
        ScanIndexForward: false,
        ConsistentRead: true,
      },
      [],
      1,
    );
    return latest && WorkflowVersionSchema.parse(bodyOf(latest));
  }

  async listWorkflows(): Promise<WorkflowSummary[]> {
    const items = await queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': REGISTRY_KEYS.workflowIndexPk },
      ConsistentRead: true,
    });
    return items.map((item) => ({
      name: String(item.sk),
      latestVersion: Number(item.latestVersion),
      updatedAt: Number(item.updatedAt),
      ...(typeof item.description === 'string' ? { description: item.description } : {}),
    }));
  }

  async deleteWorkflow(name: string): Promise<boolean> {
    const versions = await queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': REGISTRY_KEYS.workflowPk(name) },
      ProjectionExpression: 'pk, sk',
    });
    // The index entry goes first: a name half deleted is no longer listed, and a retry finishes the rest.
    await this.client.send('DeleteItem', { TableName: this.table, Key: { pk: REGISTRY_KEYS.workflowIndexPk, sk: name } });
    await this.deleteSchedule(name);
    for (const item of versions) await this.client.send('DeleteItem', { TableName: this.table, Key: { pk: item.pk, sk: item.sk } });
    return versions.length > 0;
  }

  async putSchedule(schedule: Schedule): Promise<void> {
    await this.client.send('PutItem', {
      TableName: this.table,
      Item: { pk: REGISTRY_KEYS.schedulePk, sk: schedule.workflowName, [BODY]: JSON.stringify(schedule) },
    });
  }

  async getSchedule(workflowName: string): Promise<Schedule | undefined> {
    const { Item: item } = await this.client.send('GetItem', {
      TableName: this.table,
      Key: { pk: REGISTRY_KEYS.schedulePk, sk: workflowName },
      ConsistentRead: true,
    });
    return item && ScheduleSchema.parse(bodyOf(item));
  }

  async listSchedules(): Promise<Schedule[]> {
    const items = await queryAll(this.client, {
      TableName: this.table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': REGISTRY_KEYS.schedulePk },
      ConsistentRead: true,
    });
    return items.map((item) => ScheduleSchema.parse(bodyOf(item)));
  }

  async deleteSchedule(workflowName: string): Promise<boolean> {
    const { Attributes: old } = await this.client.send('DeleteItem', {
      TableName: this.table,
      Key: { pk: REGISTRY_KEYS.schedulePk, sk: workflowName },
      ReturnValues: 'ALL_OLD',
    });
    return old !== undefined;
  }

  async claimIdempotencyKey(record: IdempotencyRecord, now: number): Promise<IdempotencyClaim> {
    const key = { pk: REGISTRY_KEYS.idempotencyPk(record.key), sk: REGISTRY_KEYS.idempotencySk };
    try {
      await this.client.send('PutItem', {
        TableName: this.table,
        Item: {
          ...key,
          runId: record.runId,
          createdAt: record.createdAt,
          expiresAtMs: record.expiresAt,
          [TABLE_KEYS.ttl]: Math.ceil(record.expiresAt / 1000),
        },
        // DynamoDB's TTL deletes within days, not at once: an expired record still present must not block.
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAtMs <= :now',
        ExpressionAttributeValues: { ':now': now },
      });
      return { claimed: true };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const { Item: item } = await this.client.send('GetItem', { TableName: this.table, Key: key, ConsistentRead: true });
    if (!item || typeof item.runId !== 'string') throw new StoreUnavailableError(`idempotency key ${record.key} was neither claimed nor found; retry`);
    return { claimed: false, runId: item.runId };
  }
}
