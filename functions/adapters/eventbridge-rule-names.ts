// A file without the EventBridge client, so that infra (and flowmend/cdk, built from it) reads the name without loading it.

/**
 * What the API's rules are named after the stack's name: CloudFormation names the stack's own rules
 * (the watcher's, ScheduledWorkflow's) `<stack>-<LogicalId>-<random>`, never with a dot, so the API, whose
 * grant is `<stack>-schedule.*`, can touch no rule but its own.
 */
export const API_RULE_INFIX = '-schedule.';
