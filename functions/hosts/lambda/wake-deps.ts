import { SFNClient } from '@aws-sdk/client-sfn';
import { SfnRunLauncher } from '../../adapters/sfn-run-launcher.ts';
import type { RunLauncher } from '../../core/index.ts';
import { ConfigurationError } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import { awsDeps } from './aws-deps.ts';

const WakeEnvSchema = z.object({
  EXPRESS_STATE_MACHINE_ARN: z.string().check(z.startsWith('arn:')),
  STANDARD_STATE_MACHINE_ARN: z.string().check(z.startsWith('arn:')),
});

/** The wake Lambda starts executions and nothing else (its role has no table grant: the launcher's store is never read here). */
export const wakeDepsFromEnv = (env: NodeJS.ProcessEnv = process.env): { launcher: RunLauncher; now: () => number } => {
  const parsed = WakeEnvSchema.safeParse(env);
  if (!parsed.success)
    throw new ConfigurationError(`wake Lambda environment: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const launcher = new SfnRunLauncher({
    sfn: new SFNClient({}),
    store: awsDeps(env).store,
    stateMachines: { express: parsed.data.EXPRESS_STATE_MACHINE_ARN, standard: parsed.data.STANDARD_STATE_MACHINE_ARN },
    now: Date.now,
  });
  return { launcher, now: Date.now };
};
