/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias, see
 * infra/bundle-options.ts). In Lambda the runtime puts the function role's credentials in the
 * environment, valid for the sandbox's life, and that is the first source the node chain tries; its
 * other sources (profiles, SSO, web identity, IMDS, container) never apply there, yet they and the
 * STS/SSO clients they need were 100 KB of every bundle and of every cold start's import.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

type FromEnvInit = Parameters<typeof fromEnv>[0];

/** The SDK clients' default credential provider: the environment, as Lambda sets it. */
export const defaultProvider = (init?: FromEnvInit) => fromEnv(init);

/** Environment credentials last as long as the sandbox: never refreshed ahead, never treated as expired. */
export const credentialsWillNeedRefresh = (): boolean => false;
export const credentialsTreatedAsExpired = (): boolean => false;
