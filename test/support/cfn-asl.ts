/**
 * Turns a synthesized template's AWS::StepFunctions::StateMachine into plain ASL JSON: resolves
 * Fn::Join / Fn::GetAtt / Ref / Fn::Sub (fake but well-formed ARNs) and applies DefinitionSubstitutions.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export interface CfnResource {
  Type: string;
  Properties?: Record<string, Json>;
}
export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
}

export const FAKE_REGION = 'us-east-1';
export const FAKE_ACCOUNT = '123456789012';

const PSEUDO: Readonly<Record<string, string>> = {
  'AWS::Partition': 'aws',
  'AWS::Region': FAKE_REGION,
  'AWS::AccountId': FAKE_ACCOUNT,
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackName': 'Flowmend',
};

/** A fake but valid ARN for a resource of the template, by its type. */
export function fakeArn(template: CfnTemplate, logicalId: string): string {
  const resource = template.Resources[logicalId];
  const name = resource?.Properties?.FunctionName ?? resource?.Properties?.StateMachineName ?? logicalId;
  switch (resource?.Type) {
    case 'AWS::Lambda::Function':
      return `arn:aws:lambda:${FAKE_REGION}:${FAKE_ACCOUNT}:function:${String(name)}`;
    case 'AWS::DynamoDB::Table':
      return `arn:aws:dynamodb:${FAKE_REGION}:${FAKE_ACCOUNT}:table/${logicalId}`;
    case 'AWS::StepFunctions::StateMachine':
      return `arn:aws:states:${FAKE_REGION}:${FAKE_ACCOUNT}:stateMachine:${String(name)}`;
    default:
      throw new Error(`no fake ARN for ${logicalId} (${resource?.Type ?? 'not in the template'})`);
  }
}

const substitute = (text: string, lookup: (name: string) => string | undefined): string =>
  text.replace(/\$\{([^}!][^}]*)\}/g, (whole, name: string) => lookup(name) ?? whole);

export function resolveIntrinsics(template: CfnTemplate, value: Json): Json {
  if (Array.isArray(value)) return value.map((v) => resolveIntrinsics(template, v));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const [only] = entries;
  if (entries.length === 1 && only !== undefined && (only[0].startsWith('Fn::') || only[0] === 'Ref')) {
    const [fn, arg] = only;
    switch (fn) {
      case 'Fn::Join': {
        const [separator, parts] = arg as [string, Json[]];
        return parts.map((p) => String(resolveIntrinsics(template, p))).join(separator);
      }
      case 'Fn::GetAtt': {
        const [id, attribute] = (typeof arg === 'string' ? arg.split('.') : arg) as [string, string];
        return attribute === 'Arn' ? fakeArn(template, id) : `${id}.${attribute}`;
      }
      case 'Ref': {
        const id = arg as string;
        if (id in PSEUDO) return PSEUDO[id] ?? id;
        if (template.Resources[id] !== undefined) return id;
        throw new Error(`Ref to unknown ${id}`);
      }
      case 'Fn::Sub': {
        const [text, vars] = (typeof arg === 'string' ? [arg, {}] : arg) as [string, Record<string, Json>];
        return substitute(text, (name) => {
          if (name in vars) return String(resolveIntrinsics(template, vars[name] ?? null));
          if (name in PSEUDO) return PSEUDO[name];
          if (name.endsWith('.Arn')) return fakeArn(template, name.slice(0, -'.Arn'.length));
          return undefined;
        });
      }
      default:
        throw new Error(`unsupported intrinsic ${fn}`);
    }
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveIntrinsics(template, v)]));
}

/** Plain ASL of every state machine in the template, by logical id. */
export function extractStateMachines(template: CfnTemplate): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::StepFunctions::StateMachine') continue;
    const props = resource.Properties ?? {};
    const raw = resolveIntrinsics(template, props.DefinitionString ?? props.Definition ?? null);
    const substitutions = resolveIntrinsics(template, props.DefinitionSubstitutions ?? {}) as Record<string, Json>;
    const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
    const resolved = substitute(text, (name) => (name in substitutions ? String(substitutions[name]) : undefined));
    out[id] = JSON.parse(resolved) as Record<string, unknown>;
  }
  return out;
}
