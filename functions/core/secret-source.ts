/**
 * Secret inputs read at use from AWS Secrets Manager or SSM Parameter Store (`"from": "secretsmanager:NAME"`
 * or `"ssm:NAME"`). The run's params hold a reference (a name, not a value) in place of the input, so the
 * engine's state, the state machine's execution data and the store never see the value; the node's runner
 * resolves references just before it runs, and redacts the values from what it returns.
 */

/** `secretsmanager:<secret name or ARN>` or `ssm:<parameter name>`. */
export const SECRET_SOURCE_PATTERN = /^(secretsmanager|ssm):([A-Za-z0-9/_+=.@:-]{1,2048})$/;
export const SECRET_SOURCE_HINT = '"secretsmanager:<secret name>" or "ssm:<parameter name>"';

export type SecretService = 'secretsmanager' | 'ssm';

export interface SecretSource {
  service: SecretService;
  name: string;
}

const OPEN = '⟦flowmend-secret:';
const CLOSE = '⟧';
/** A reference as it stands in params and in the strings templates resolve to. */
const REFERENCE = /⟦flowmend-secret:(secretsmanager|ssm):([A-Za-z0-9/_+=.@:-]{1,2048})⟧/g;

/** What the run's params hold for an input read from `from`. */
export const secretReference = (from: string): string => `${OPEN}${from}${CLOSE}`;

export const parseSecretSource = (from: string): SecretSource | undefined => {
  const match = SECRET_SOURCE_PATTERN.exec(from);
  return match ? { service: match[1] as SecretService, name: match[2] as string } : undefined;
};

const key = (source: SecretSource): string => `${source.service}:${source.name}`;

/** Every reference in a JSON-like value (keys and strings, at any depth), once each. */
export const findSecretReferences = (value: unknown): SecretSource[] => {
  const found = new Map<string, SecretSource>();
  const visit = (item: unknown): void => {
    if (typeof item === 'string') {
      if (!item.includes(OPEN)) return;
      for (const match of item.matchAll(REFERENCE)) {
        const source = { service: match[1] as SecretService, name: match[2] as string };
        found.set(key(source), source);
      }
    } else if (Array.isArray(item)) {
      for (const entry of item) visit(entry);
    } else if (item !== null && typeof item === 'object') {
      for (const [k, entry] of Object.entries(item)) {
        visit(k);
        visit(entry);
      }
    }
  };
  visit(value);
  return [...found.values()];
};

/** A copy of `value` with each reference replaced by its value (keys included); the input is not changed. */
export const replaceSecretReferences = (value: unknown, values: ReadonlyMap<string, string>): unknown => {
  if (typeof value === 'string') {
    return value.includes(OPEN) ? value.replace(REFERENCE, (whole, service: string, name: string) => values.get(`${service}:${name}`) ?? whole) : value;
  }
  if (Array.isArray(value)) return value.map((entry) => replaceSecretReferences(entry, values));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, entry] of Object.entries(value)) {
      Object.defineProperty(out, replaceSecretReferences(k, values) as string, {
        value: replaceSecretReferences(entry, values),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
};

/** Reads a secret's current value. Rejects with `SecretUnavailableError` when it cannot be read. */
export interface SecretResolver {
  resolve(source: SecretSource): Promise<string>;
}

/** The map `replaceSecretReferences` takes, for the references in `value`. */
export const resolveSecretReferences = async (value: unknown, resolver: SecretResolver): Promise<Map<string, string>> => {
  const sources = findSecretReferences(value);
  const values = await Promise.all(sources.map((source) => resolver.resolve(source)));
  return new Map(sources.map((source, i) => [key(source), values[i] as string]));
};
