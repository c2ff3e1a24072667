import {
  type ChildLoader,
  formatIssues,
  inlineChildWorkflows,
  parseWorkflow,
  type RegistryStore,
  type ValidationIssue,
  type Workflow,
} from '../../core/index.ts';
import { ApiError } from './api-error.ts';

/** The API's children: registered workflows by name (their latest version); it has no files for workflow_ref. */
const registryLoader =
  (registry: RegistryStore): ChildLoader =>
  async (source) => {
    if (source.kind === 'ref') {
      return {
        ok: false,
        message: 'the API reads no files: register the child (PUT /workflows/{name}) and name it with workflow_name, or inline it as workflow_ir',
      };
    }
    const registered = await registry.getWorkflow(source.name);
    if (!registered) return { ok: false, message: `no registered workflow '${source.name}' (see GET /workflows)` };
    return { ok: true, raw: registered.workflow, origin: `name:${registered.name}` };
  };

/**
 * Freezes the registered children a workflow names into it (see `inlineChildWorkflows`), refusing a
 * cycle of names with a 422 that names it. A workflow that does not parse is returned as it is, for
 * the caller's own parse to report. `parse` may be a memo of parseWorkflow (parsed-workflows.ts).
 */
export const withRegisteredChildren = async (
  registry: RegistryStore,
  raw: unknown,
  name: string | undefined,
  parse: (raw: unknown) => ReturnType<typeof parseWorkflow> = parseWorkflow,
): Promise<unknown> => {
  const parsed = parse(raw);
  return parsed.ok ? inlineRegistered(registry, parsed.workflow, name) : raw;
};

/** A parsed workflow with its registered children frozen in; throws the 422 of `childrenRefused`. */
export const inlineRegistered = async (registry: RegistryStore, workflow: Workflow, name: string | undefined): Promise<Workflow> => {
  const inlined = await inlineChildWorkflows(workflow, `name:${name ?? workflow.name ?? 'request'}`, registryLoader(registry));
  if (!inlined.ok) throw childrenRefused(inlined.issues);
  return inlined.workflow;
};

export const childrenRefused = (issues: ValidationIssue[]): ApiError =>
  new ApiError(422, 'INVALID_WORKFLOW', `the workflow's child workflows cannot be resolved:\n${formatIssues(issues)}`, { issues });
