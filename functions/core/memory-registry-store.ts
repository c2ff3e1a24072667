import type { Workflow } from './ir.ts';
import type { IdempotencyRecord, Schedule, WorkflowSummary, WorkflowVersion } from './registry-model.ts';
import type { IdempotencyClaim, RegistryStore } from './registry-store.ts';
import { copyStoredValue } from './stored-value.ts';

/** RegistryStore in memory, for unit tests and as the contract suite's reference. */
export class MemoryRegistryStore implements RegistryStore {
  private readonly versions = new Map<string, WorkflowVersion[]>();
  private readonly schedules = new Map<string, Schedule>();
  private readonly keys = new Map<string, IdempotencyRecord>();

  async putWorkflow(name: string, workflow: Workflow, now: number): Promise<WorkflowVersion> {
    const list = this.versions.get(name) ?? [];
    const item: WorkflowVersion = { name, version: list.length + 1, workflow: copyStoredValue(workflow), createdAt: now };
    this.versions.set(name, [...list, item]);
    return copyStoredValue(item);
  }

  async getWorkflow(name: string, version?: number): Promise<WorkflowVersion | undefined> {
    const list = this.versions.get(name) ?? [];
    const item = version === undefined ? list.at(-1) : list.find((v) => v.version === version);
    return item && copyStoredValue(item);
  }

  async listWorkflows(): Promise<WorkflowSummary[]> {
    return [...this.versions.values()]
      .map((list) => list.at(-1))
      .filter((v): v is WorkflowVersion => v !== undefined)
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((v) => ({
        name: v.name,
        latestVersion: v.version,
        updatedAt: v.createdAt,
        ...(v.workflow.description ? { description: v.workflow.description } : {}),
      }));
  }

  async deleteWorkflow(name: string): Promise<boolean> {
    this.schedules.delete(name);
    return this.versions.delete(name);
  }

  async putSchedule(schedule: Schedule): Promise<void> {
    this.schedules.set(schedule.workflowName, copyStoredValue(schedule));
  }

  async getSchedule(workflowName: string): Promise<Schedule | undefined> {
    const item = this.schedules.get(workflowName);
    return item && copyStoredValue(item);
  }

  async listSchedules(): Promise<Schedule[]> {
    return [...this.schedules.values()].sort((a, b) => (a.workflowName < b.workflowName ? -1 : 1)).map(copyStoredValue);
  }

  async deleteSchedule(workflowName: string): Promise<boolean> {
    return this.schedules.delete(workflowName);
  }

  async claimIdempotencyKey(record: IdempotencyRecord, now: number): Promise<IdempotencyClaim> {
    const existing = this.keys.get(record.key);
    if (existing && existing.expiresAt > now) return { claimed: false, runId: existing.runId };
    this.keys.set(record.key, { ...record });
    return { claimed: true };
  }
}
