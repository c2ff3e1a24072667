import type { Template } from 'aws-cdk-lib/assertions';
import type { CfnTemplate, Json } from '../support/cfn-asl.ts';

export type Statement = { Effect: string; Action: string | string[]; Resource: Json };

export const asCfn = (template: Template): CfnTemplate => template.toJSON() as CfnTemplate;

/** Logical id of the one resource of `type` whose id starts with `prefix` (construct path, e.g. `RunShell`). */
export function logicalId(template: CfnTemplate, type: string, prefix: string): string {
  const ids = Object.entries(template.Resources)
    .filter(([id, r]) => r.Type === type && id.startsWith(prefix))
    .map(([id]) => id);
  if (ids.length !== 1) throw new Error(`expected one ${type} named ${prefix}*, found ${ids.join(', ') || 'none'}`);
  return ids[0] as string;
}

const refOf = (value: Json | undefined): string | undefined => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return String(getAtt[0]);
  const ref = value.Ref;
  return typeof ref === 'string' ? ref : undefined;
};

/** Every inline statement granted to the role of a Lambda or state machine. */
export function statementsOf(template: CfnTemplate, resourceId: string): Statement[] {
  const props = template.Resources[resourceId]?.Properties ?? {};
  const roleId = refOf(props.Role ?? props.RoleArn);
  if (roleId === undefined) throw new Error(`${resourceId} has no role`);
  return (
    Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .filter((r) => (r.Properties?.Roles as Json[] | undefined)?.some((role) => refOf(role) === roleId))
      // biome-ignore lint/correctness/noUnsafeOptionalChaining: a policy without a document fails the test here
      .flatMap((r) => (r.Properties?.PolicyDocument as { Statement: Statement[] }).Statement)
  );
}

export const actionsOf = (statements: readonly Statement[]): string[] => statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));

export function managedPoliciesOf(template: CfnTemplate, resourceId: string): string[] {
  const roleId = refOf(template.Resources[resourceId]?.Properties?.Role);
  const role = roleId === undefined ? undefined : template.Resources[roleId];
  return ((role?.Properties?.ManagedPolicyArns as Json[] | undefined) ?? []).map((arn) => JSON.stringify(arn));
}
