import type { AwsWaitServices } from '../../adapters/aws-wait-services.ts';
import type { CallbackConfig, CallbackSource, EngineDeps } from '../../core/index.ts';
import { ConfigurationError } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import { loadWaitServices } from './bundled-wait-services.ts';

/** What the stack puts in the Advance Lambda's environment for waits (infra/constructs/waits.ts). */
export const WaitEnvSchema = z.object({
  FLOWMEND_WAKE_GROUP: z.optional(z.string().check(z.minLength(1))),
  FLOWMEND_WAKE_TARGET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  FLOWMEND_WAKE_ROLE_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  FLOWMEND_WAKE_DLQ_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  /** A secret holding `{"key": "<random>", "url": "<the API's URL>"}`. */
  FLOWMEND_CALLBACK_SECRET_ID: z.optional(z.string().check(z.minLength(1))),
});

const CallbackSecretSchema = z.object({
  key: z.string().check(z.minLength(32, 'the callback secret\'s "key" is at least 32 characters')),
  url: z.url({ protocol: /^https?$/ }),
});

/** The callback key and URL from their secret, read at the first wait-for-event of a cold start (a failed read is tried again). */
const secretCallbacks = (secretId: string, services: () => Promise<AwsWaitServices>): CallbackSource => {
  let loaded: Promise<CallbackConfig> | undefined;
  const read = async (): Promise<CallbackConfig> => {
    const parsed = CallbackSecretSchema.safeParse(JSON.parse(await (await services()).readSecret(secretId)));
    if (!parsed.success)
      throw new ConfigurationError(`secret ${secretId} is not the callback secret the stack makes: ${parsed.error.issues[0]?.message ?? ''}`);
    return { key: Buffer.from(parsed.data.key, 'utf8'), baseUrl: parsed.data.url };
  };
  return {
    load: () => {
      loaded ??= read().catch((error: unknown) => {
        loaded = undefined;
        throw error;
      });
      return loaded;
    },
  };
};

/** Wake-up schedules and callbacks for the engine on AWS, when the stack configured them. */
export const waitDepsFromEnv = (
  env: NodeJS.ProcessEnv = process.env,
  services: () => Promise<AwsWaitServices> = loadWaitServices,
): Pick<EngineDeps, 'wakeups' | 'callbacks'> => {
  const parsed = WaitEnvSchema.safeParse(env);
  if (!parsed.success)
    throw new ConfigurationError(`Lambda environment for waits: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const e = parsed.data;
  const deps: Pick<EngineDeps, 'wakeups' | 'callbacks'> = {};
  if (e.FLOWMEND_WAKE_GROUP && e.FLOWMEND_WAKE_TARGET_ARN && e.FLOWMEND_WAKE_ROLE_ARN) {
    const target = {
      groupName: e.FLOWMEND_WAKE_GROUP,
      targetArn: e.FLOWMEND_WAKE_TARGET_ARN,
      roleArn: e.FLOWMEND_WAKE_ROLE_ARN,
      ...(e.FLOWMEND_WAKE_DLQ_ARN ? { deadLetterArn: e.FLOWMEND_WAKE_DLQ_ARN } : {}),
    };
    deps.wakeups = { schedule: async (request) => (await services()).wakeups(target).schedule(request) };
  }
  if (e.FLOWMEND_CALLBACK_SECRET_ID) deps.callbacks = secretCallbacks(e.FLOWMEND_CALLBACK_SECRET_ID, services);
  return deps;
};
