import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Wakeups } from '../core/index.ts';
import { secretsManagerReader } from './anthropic-key.ts';
import { SchedulerWakeups, type WakeTarget } from './scheduler-wakeups.ts';

/**
 * The AWS clients waits need in the Advance Lambda: Scheduler (wake-ups) and Secrets Manager (the callback
 * secret). Bundled as a file of its own beside the Advance bundle (infra: `sideBundles`), loaded at the first
 * wait of a cold start, so that an Advance of a run that never waits loads neither client.
 */
export const awsWaitServices = {
  wakeups: (target: WakeTarget): Wakeups => new SchedulerWakeups(target, new SchedulerClient({})),
  readSecret: (secretId: string): Promise<string> => secretsManagerReader(new SecretsManagerClient({}))(secretId),
};
export type AwsWaitServices = typeof awsWaitServices;
