// Imports types only: infra reads SECRET_RESOLVER_FILE at synth without loading core.
import type { SecretResolver } from '../../core/index.ts';

/**
 * The file beside each runner's `index.mjs` that holds the Secrets Manager and SSM clients
 * (functions/adapters/aws-secret-resolver.ts, bundled on its own by the construct's afterBundling hook).
 * In the runner bundle the two clients were 240 of 370 KB, loaded on every cold start for the few
 * nodes that read a secret input; one bundle with a lazy `import()` split nothing and grew to 552 KB.
 */
export const SECRET_RESOLVER_FILE = 'aws-secrets.mjs';

/** What the resolver module exports (the adapter's one resolver per cold start). */
interface SecretResolverModule {
  awsSecretResolver: SecretResolver;
}

/**
 * Where the resolver module is: beside the bundle when this code runs bundled (`index.mjs`), the adapter's
 * source when it runs from source (tsx, vitest), where no bundle exists.
 */
export const secretResolverUrl = (here: string = import.meta.url): string =>
  new URL(here.endsWith('.ts') ? '../../adapters/aws-secret-resolver.ts' : `./${SECRET_RESOLVER_FILE}`, here).href;

const importResolver = async (): Promise<SecretResolver> => {
  const url = secretResolverUrl();
  const loaded = (await import(url)) as Partial<SecretResolverModule>;
  // A bundle without its side file is a deployment bug; say which file, not "undefined is not a function".
  if (typeof loaded.awsSecretResolver?.resolve !== 'function') throw new Error(`${url} does not export awsSecretResolver`);
  return loaded.awsSecretResolver;
};

/**
 * A SecretResolver that loads the real one on its first `resolve`: a runner whose nodes have no
 * secret input never loads the AWS clients. A failed load is not kept, so the next node tries again.
 */
export const lazySecretResolver = (load: () => Promise<SecretResolver> = importResolver): SecretResolver => {
  let loading: Promise<SecretResolver> | undefined;
  return {
    resolve: async (source) => {
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return (await loading).resolve(source);
    },
  };
};

/** The resolver every runner Lambda passes to makeRunNodeHandler. */
export const bundledSecretResolver: SecretResolver = lazySecretResolver();
