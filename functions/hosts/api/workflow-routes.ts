import { Hono } from 'hono';
import type { Schedule } from '../../core/index.ts';
import { formatIssues, hasErrors, parseWorkflow, prepareInputs, validateWorkflow } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import type { ApiDeps } from './api-deps.ts';
import { ApiError, notFound } from './api-error.ts';
import { ScheduleBodySchema, WorkflowNameParamSchema, WorkflowQuerySchema } from './api-schemas.ts';
import { compileMarkdown, hasMarkdownBody, workflowFromField } from './markdown-workflow.ts';
import { inlineRegistered } from './registered-children.ts';
import { readBody, readParams, readQuery } from './request-parsing.ts';
import { nextFireTimes, parseScheduleExpression } from './schedule-expression.ts';

/** How many upcoming fire times `GET .../schedule` shows. */
const NEXT_FIRES = 5;
const iso = (ms: number) => new Date(ms).toISOString();

const scheduleView = (schedule: Schedule, now: number) => {
  const parsed = parseScheduleExpression(schedule.expression, schedule.timezone, schedule.updatedAt);
  return {
    workflow: schedule.workflowName,
    expression: schedule.expression,
    timezone: schedule.timezone,
    params: schedule.params,
    enabled: schedule.enabled,
    created_at: iso(schedule.createdAt),
    updated_at: iso(schedule.updatedAt),
    next_fire_times: schedule.enabled && parsed.ok ? nextFireTimes(parsed.expression, now, NEXT_FIRES).map(iso) : [],
  };
};

/** `/workflows`: registered workflows (every PUT a new immutable version) and their schedules. */
export const makeWorkflowRoutes = (deps: ApiDeps): Hono => {
  const app = new Hono();

  app.get('/', async (c) => {
    const workflows = await deps.registry.listWorkflows();
    return c.json({
      workflows: workflows.map((w) => ({
        name: w.name,
        latest_version: w.latestVersion,
        updated_at: iso(w.updatedAt),
        ...(w.description ? { description: w.description } : {}),
      })),
    });
  });

  app.put('/:name', async (c) => {
    const { name } = readParams(c, WorkflowNameParamSchema);
    const raw = hasMarkdownBody(c) ? await compileMarkdown(await c.req.text()) : await workflowFromField(await readBody(c, z.unknown()));
    const parsed = parseWorkflow(raw);
    if (!parsed.ok) throw new ApiError(422, 'INVALID_WORKFLOW', `the workflow does not parse:\n${formatIssues(parsed.issues)}`, { issues: parsed.issues });
    // The registry keeps the workflow as written (a child by name runs its latest version); validation sees the children too.
    const issues = validateWorkflow(await inlineRegistered(deps.registry, parsed.workflow, name), deps.catalog);
    if (hasErrors(issues)) throw new ApiError(422, 'INVALID_WORKFLOW', `the workflow does not validate:\n${formatIssues(issues)}`, { issues });
    const stored = await deps.registry.putWorkflow(name, parsed.workflow, deps.now());
    return c.json(
      {
        name,
        version: stored.version,
        created_at: iso(stored.createdAt),
        warnings: issues,
        links: { self: `/workflows/${name}`, schedule: `/workflows/${name}/schedule` },
      },
      201,
    );
  });

  app.get('/:name', async (c) => {
    const { name } = readParams(c, WorkflowNameParamSchema);
    const { version } = readQuery(c, WorkflowQuerySchema);
    const stored = await deps.registry.getWorkflow(name, version);
    if (!stored) throw notFound(`workflow '${name}'${version === undefined ? '' : ` version ${version}`}`);
    return c.json({ name, version: stored.version, created_at: iso(stored.createdAt), workflow: stored.workflow });
  });

  app.delete('/:name', async (c) => {
    const { name } = readParams(c, WorkflowNameParamSchema);
    if (!(await deps.registry.deleteWorkflow(name))) throw notFound(`workflow '${name}'`);
    await deps.scheduleSync?.remove(name);
    return c.body(null, 204);
  });

  app.put('/:name/schedule', async (c) => {
    const { name } = readParams(c, WorkflowNameParamSchema);
    const body = await readBody(c, ScheduleBodySchema);
    const workflow = await deps.registry.getWorkflow(name);
    if (!workflow) throw notFound(`workflow '${name}' (register it with PUT /workflows/${name} first)`);
    const now = deps.now();
    const parsed = parseScheduleExpression(body.expression, body.timezone, now);
    if (!parsed.ok) throw new ApiError(422, 'INVALID_SCHEDULE', parsed.message, { field: 'expression' });
    const inputs = prepareInputs(workflow.workflow, body.params);
    if (!inputs.ok)
      throw new ApiError(422, 'INVALID_SCHEDULE', `params do not fit workflow '${name}': ${inputs.problems.map((p) => p.message).join('; ')}`, {
        problems: inputs.problems,
      });
    const previous = await deps.registry.getSchedule(name);
    const schedule: Schedule = { workflowName: name, ...body, createdAt: previous?.createdAt ?? now, updatedAt: now };
    // The service first: a schedule it refuses (a rule cannot read a time zone) is not kept either.
    await deps.scheduleSync?.upsert(schedule);
    await deps.registry.putSchedule(schedule);
    return c.json(scheduleView(schedule, now), previous ? 200 : 201);
  });

  app.get('/:name/schedule', async (c) => {
    const { name } = readParams(c, WorkflowNameParamSchema);
    const schedule = await deps.registry.getSchedule(name);
    if (!schedule) throw notFound(`a schedule for workflow '${name}'`);
    return c.json(scheduleView(schedule, deps.now()));
  });

  app.delete('/:name/schedule', async (c) => {
    const { name } = readParams(c, WorkflowNameParamSchema);
    if (!(await deps.registry.deleteSchedule(name))) throw notFound(`a schedule for workflow '${name}'`);
    await deps.scheduleSync?.remove(name);
    return c.body(null, 204);
  });

  return app;
};
