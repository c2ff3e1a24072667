import type { ApiDeps } from './api-deps.ts';
import { startRun } from './run-operations.ts';
import { nextFireAfter, parseScheduleExpression } from './schedule-expression.ts';

/** At most this many fire times of one schedule per tick: a long pause (a laptop asleep) does not start a flood. */
const MAX_FIRES_PER_TICK = 10;

export interface Fired {
  workflowName: string;
  scheduledAt: string;
  runId: string;
  /** Another process (or an earlier tick) had already started this fire's run. */
  replayed: boolean;
}

/** The idempotency key of one fire: the same in every process, so a fire starts one run however many schedulers see it. */
export const fireKey = (workflowName: string, scheduledAt: number): string => `schedule:${workflowName}:${new Date(scheduledAt).toISOString()}`;

/**
 * `flowmend serve`'s scheduler: on each tick of its clock it starts a run for every fire time of every
 * enabled schedule since the previous tick, as EventBridge Scheduler does on AWS (same expressions; missed
 * fires before the scheduler started are not made up).
 */
export class ScheduleRunner {
  constructor(
    private readonly deps: ApiDeps,
    private lastTick: number,
    private readonly log: (message: string) => void = () => {},
  ) {}

  async tick(now: number): Promise<Fired[]> {
    const since = this.lastTick;
    if (now <= since) return [];
    this.lastTick = now;
    const fired: Fired[] = [];
    for (const schedule of await this.deps.registry.listSchedules()) {
      if (!schedule.enabled) continue;
      const parsed = parseScheduleExpression(schedule.expression, schedule.timezone, schedule.updatedAt);
      if (!parsed.ok) continue;
      let cursor = Math.max(since, schedule.updatedAt - 1);
      for (let n = 0; n < MAX_FIRES_PER_TICK; n += 1) {
        const at = nextFireAfter(parsed.expression, cursor);
        if (at === undefined || at > now) break;
        cursor = at;
        try {
          const started = await startRun(
            this.deps,
            { workflow_name: schedule.workflowName, params: schedule.params, repair: true },
            fireKey(schedule.workflowName, at),
          );
          fired.push({ workflowName: schedule.workflowName, scheduledAt: new Date(at).toISOString(), runId: started.runId, replayed: started.replayed });
        } catch (error) {
          this.log(`schedule of ${schedule.workflowName} at ${new Date(at).toISOString()} could not start a run: ${(error as Error).message}`);
        }
      }
    }
    return fired;
  }
}
