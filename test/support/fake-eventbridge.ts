import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { readBody } from './read-body.ts';

type FakeTarget = { Id: string; Arn: string; InputTransformer?: { InputPathsMap?: Record<string, string>; InputTemplate: string } };

export interface FakeRule {
  Name: string;
  ScheduleExpression: string;
  State: string | undefined;
  Description: string | undefined;
  Targets: Map<string, FakeTarget>;
}

export interface FakeEventBridge {
  endpoint: string;
  client: EventBridgeClient;
  /** Rules of the default bus, by name. */
  rules: Map<string, FakeRule>;
  /** `Operation RuleName`, in order. */
  calls: string[];
  close(): Promise<void>;
}

/** EventBridge reads these on a rule; the fake rejects anything else the way EventBridge does. */
const VALID_EXPRESSION = /^(cron\([^()]+\)|rate\(\d+ (minute|minutes|hour|hours|day|days)\))$/;

/**
 * EventBridge's JSON 1.1 API on 127.0.0.1, as far as the rules sync uses it: PutRule (create or
 * overwrite, 400 ValidationException on a bad expression), PutTargets, RemoveTargets and DeleteRule
 * (404-style ResourceNotFoundException on an unknown rule; DeleteRule refuses a rule that has targets).
 */
export async function startFakeEventBridge(): Promise<FakeEventBridge> {
  const rules = new Map<string, FakeRule>();
  const calls: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const operation = String(req.headers['x-amz-target'] ?? '').replace(/^AWSEvents\./, '');
    const body = JSON.parse((await readBody(req)) || '{}') as Record<string, unknown>;
    const name = String(body.Name ?? body.Rule ?? '');
    calls.push(`${operation} ${name}`);
    const answer = (status: number, payload: unknown) => res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(payload));
    const fail = (type: string, message: string) => answer(400, { __type: type, message });
    const rule = rules.get(name);
    switch (operation) {
      case 'PutRule': {
        const expression = String(body.ScheduleExpression ?? '');
        if (!VALID_EXPRESSION.test(expression)) return fail('ValidationException', 'Parameter ScheduleExpression is not valid.');
        rules.set(name, {
          Name: name,
          ScheduleExpression: expression,
          State: body.State as string | undefined,
          Description: body.Description as string | undefined,
          Targets: rule?.Targets ?? new Map(),
        });
        return answer(200, { RuleArn: `arn:aws:events:us-east-1:123456789012:rule/${name}` });
      }
      case 'PutTargets':
        if (rule === undefined) return fail('ResourceNotFoundException', `Rule ${name} does not exist.`);
        for (const target of body.Targets as FakeTarget[]) rule.Targets.set(target.Id, target);
        return answer(200, { FailedEntryCount: 0, FailedEntries: [] });
      case 'RemoveTargets':
        if (rule === undefined) return fail('ResourceNotFoundException', `Rule ${name} does not exist.`);
        for (const id of body.Ids as string[]) rule.Targets.delete(id);
        return answer(200, { FailedEntryCount: 0, FailedEntries: [] });
      case 'DeleteRule':
        if (rule === undefined) return fail('ResourceNotFoundException', `Rule ${name} does not exist.`);
        if (rule.Targets.size > 0) return fail('ValidationException', "Rule can't be deleted since it has targets.");
        rules.delete(name);
        return answer(200, {});
      default:
        return fail('UnknownOperationException', `the fake does not serve ${operation}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new EventBridgeClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
  return {
    endpoint,
    client,
    rules,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        client.destroy();
        server.close(() => resolve());
      }),
  };
}
