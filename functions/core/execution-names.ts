/**
 * Names of a run's Step Functions executions: at most 80 characters of 0-9A-Za-z-_ (Step Functions does
 * not log an execution whose name has any other character, which would blind the Express watcher), each
 * naming its run, so that the watcher can tell which run an execution served:
 * - the first execution of an owner is named after the owner: `sfn-<runId>-<8 hex>` (StartRun, the API, resume);
 * - each execution a run continues as is `c-<runId>-<rev>`, rev being the 12-hex commit that decided to
 *   continue (a retried start reuses the name).
 * A run id is at most 64 characters, so both fit.
 */
const OWNER_NAME = /^sfn-([A-Za-z0-9_-]{6,64})-[0-9a-f]{8}$/;
const CONTINUED_NAME = /^c-([A-Za-z0-9_-]{6,64})-[0-9a-f]{12}$/;

/** The Continue state's Name: `States.Format` over the payload's run id and rev. */
export const CONTINUED_EXECUTION_NAME = "States.Format('c-{}-{}', $.runId, $.rev)";

/** The owner id (and first execution name) of a new owner of `runId`; `hex8` is 8 random hex characters. */
export const ownerExecutionName = (runId: string, hex8: string): string => `sfn-${runId}-${hex8}`;

/** What the Continue state names the execution a run continues as (CONTINUED_EXECUTION_NAME, evaluated). */
export const continuedExecutionName = (runId: string, rev: string): string => `c-${runId}-${rev}`;

/** The run a name made by `ownerExecutionName` belongs to. */
export const runIdOfOwnerName = (name: string): string | undefined => OWNER_NAME.exec(name)?.[1];

/** The run an execution served, from its name; undefined for an execution flowmend did not name. */
export const runIdOfExecution = (name: string): string | undefined => OWNER_NAME.exec(name)?.[1] ?? CONTINUED_NAME.exec(name)?.[1];
