import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { readBody } from './read-body.ts';

export interface FakeSchedule {
  Name: string;
  GroupName: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone?: string;
  State?: string;
  Target: { Arn: string; RoleArn: string; Input?: string };
}

export interface FakeScheduler {
  endpoint: string;
  client: SchedulerClient;
  /** Schedules by `group/name`. */
  schedules: Map<string, FakeSchedule>;
  /** `METHOD name`, in order. */
  calls: string[];
  close(): Promise<void>;
}

/** Scheduler accepts these; the fake rejects anything else the way Scheduler does (ValidationException). */
const VALID_EXPRESSION = /^(cron\([^()]+\)|rate\(\d+ \w+\)|at\([\dT:-]+\))$/;

/**
 * EventBridge Scheduler's REST-JSON API on 127.0.0.1, as far as the API uses it: Create (409 on a name
 * taken), Update and Delete (404 on an unknown name) of schedules in a group, and its 400 on a bad expression.
 */
export async function startFakeScheduler(): Promise<FakeScheduler> {
  const schedules = new Map<string, FakeSchedule>();
  const calls: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const name = decodeURIComponent(url.pathname.replace(/^\/schedules\//, ''));
    const body = (JSON.parse((await readBody(req)) || '{}') ?? {}) as Partial<FakeSchedule>;
    const group = body.GroupName ?? url.searchParams.get('groupName') ?? 'default';
    const key = `${group}/${name}`;
    calls.push(`${req.method} ${name}`);
    const answer = (status: number, payload: unknown, errorType?: string) =>
      res.writeHead(status, { 'content-type': 'application/json', ...(errorType ? { 'x-amzn-errortype': errorType } : {}) }).end(JSON.stringify(payload));
    if ((req.method === 'POST' || req.method === 'PUT') && !VALID_EXPRESSION.test(body.ScheduleExpression ?? '')) {
      answer(400, { Message: `Invalid Schedule Expression ${body.ScheduleExpression}.` }, 'ValidationException');
      return;
    }
    const exists = schedules.has(key);
    switch (req.method) {
      case 'POST':
        if (exists) return answer(409, { Message: `Schedule ${name} already exists.` }, 'ConflictException');
        schedules.set(key, { ...(body as FakeSchedule), Name: name, GroupName: group });
        return answer(200, { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${key}` });
      case 'PUT':
        if (!exists) return answer(404, { Message: `Schedule ${name} does not exist.` }, 'ResourceNotFoundException');
        schedules.set(key, { ...(body as FakeSchedule), Name: name, GroupName: group });
        return answer(200, { ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${key}` });
      case 'DELETE':
        if (!exists) return answer(404, { Message: `Schedule ${name} does not exist.` }, 'ResourceNotFoundException');
        schedules.delete(key);
        return answer(200, {});
      default:
        return answer(400, { Message: `the fake does not serve ${req.method}` }, 'ValidationException');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new SchedulerClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  });
  return {
    endpoint,
    client,
    schedules,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        client.destroy();
        server.close(() => resolve());
      }),
  };
}
