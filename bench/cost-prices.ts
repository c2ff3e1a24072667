/**
 * Published us-east-1 prices (issue 5) and the duration model that turns a run measured on the local
 * host into what the same run would bill on AWS.
 */
export const PRICES = {
  standardPerTransition: 0.025 / 1_000,
  expressPerRequest: 1 / 1_000_000,
  expressPerGbSecond: 0.00001667,
  lambdaPerRequest: 0.2 / 1_000_000,
  /** arm64, the architecture the stack deploys. */
  lambdaPerGbSecond: 0.0000133334,
  dynamoPerWriteUnit: 0.625 / 1_000_000,
  dynamoPerReadUnit: 0.125 / 1_000_000,
  /** EventBridge Scheduler, per invocation (a waiting run's wake-up). */
  schedulerPerInvocation: 1 / 1_000_000,
} as const;

export const MODEL = {
  /** The stack's default Lambda memory. */
  lambdaGb: 512 / 1024,
  /**
   * Least billed time of an Advance or Repair call on AWS: its 2-4 DynamoDB requests take a few ms each
   * there, where loopback dynalite takes about 1 ms.
   */
  engineMsFloor: 25,
  runnerMsFloor: 5,
  /** Express bills memory in 64 MB steps; these executions carry references only. */
  expressGb: 64 / 1024,
  /** Step Functions' own time per transition, added to the Lambda time of an Express execution. */
  expressMsPerTransition: 5,
  expressBillingStepMs: 100,
} as const;

/** What one run did, counted on the local host. */
export interface RunCounts {
  executions: number;
  transitions: number;
  engineCalls: number;
  runnerCalls: number;
  engineMs: number;
  runnerMs: number;
  writeUnits: number;
  readUnits: number;
  dynamoRequests: number;
}

export interface RunCost {
  lambdaMs: number;
  lambda: number;
  dynamo: number;
  standard: number;
  express: number;
}

const billedMs = (totalMs: number, calls: number, floor: number): number => (calls === 0 ? 0 : calls * Math.max(floor, Math.ceil(totalMs / calls)));

/** Dollars for one run on each kind of state machine (Lambda and DynamoDB are the same on both). */
export function priceRun(c: RunCounts): RunCost {
  const lambdaMs = billedMs(c.engineMs, c.engineCalls, MODEL.engineMsFloor) + billedMs(c.runnerMs, c.runnerCalls, MODEL.runnerMsFloor);
  const lambda = (c.engineCalls + c.runnerCalls) * PRICES.lambdaPerRequest + (lambdaMs / 1000) * MODEL.lambdaGb * PRICES.lambdaPerGbSecond;
  const dynamo = c.writeUnits * PRICES.dynamoPerWriteUnit + c.readUnits * PRICES.dynamoPerReadUnit;
  const perExecutionMs = (lambdaMs + c.transitions * MODEL.expressMsPerTransition) / Math.max(1, c.executions);
  const expressBilledMs = c.executions * Math.ceil(perExecutionMs / MODEL.expressBillingStepMs) * MODEL.expressBillingStepMs;
  const expressOwn = c.executions * PRICES.expressPerRequest + (expressBilledMs / 1000) * MODEL.expressGb * PRICES.expressPerGbSecond;
  return {
    lambdaMs,
    lambda,
    dynamo,
    standard: c.transitions * PRICES.standardPerTransition + lambda + dynamo,
    express: expressOwn + lambda + dynamo,
  };
}
