// Imports types only: infra reads WAIT_SERVICES_FILE at synth without loading the clients.
import type { AwsWaitServices } from '../../adapters/aws-wait-services.ts';

/** The file beside the Advance Lambda's `index.mjs` with the Scheduler and Secrets Manager clients (adapters/aws-wait-services.ts). */
export const WAIT_SERVICES_FILE = 'aws-waits.mjs';
export const WAIT_SERVICES_ENTRY = 'functions/adapters/aws-wait-services.ts';

/** Beside the bundle when running bundled, the adapter's source when running from source (tsx, vitest). */
export const waitServicesUrl = (here: string = import.meta.url): string =>
  new URL(here.endsWith('.ts') ? '../../adapters/aws-wait-services.ts' : `./${WAIT_SERVICES_FILE}`, here).href;

let loading: Promise<AwsWaitServices> | undefined;

/** The wait services, imported once per cold start at the first wait; a failed import is tried again. */
export const loadWaitServices = (): Promise<AwsWaitServices> => {
  loading ??= (async () => {
    const url = waitServicesUrl();
    const loaded = (await import(url)) as { awsWaitServices?: AwsWaitServices };
    // A bundle without its side file is a deployment bug: say which file.
    if (typeof loaded.awsWaitServices?.wakeups !== 'function') throw new Error(`${url} does not export awsWaitServices`);
    return loaded.awsWaitServices;
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
};
