import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SFNClient } from '@aws-sdk/client-sfn';
import { readBody } from './read-body.ts';

export interface FakeExecution {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
}

export interface FakeSfn {
  endpoint: string;
  /** A client of the fake, with dummy credentials. */
  client: SFNClient;
  executions: FakeExecution[];
  /** Operations received, in order (`StartExecution`, ...). */
  calls: string[];
  close(): Promise<void>;
}

/**
 * The Step Functions JSON API (AWS JSON 1.0, routed on X-Amz-Target) on 127.0.0.1, as far as the
 * launcher uses it: Start/Describe/StopExecution, with AWS's rules on names (Standard: a repeated name
 * with the same input returns the first execution; with another input, ExecutionAlreadyExists) and on
 * Express (its executions cannot be described or stopped). Machines whose ARN holds `express` are Express.
 */
export async function startFakeSfn(): Promise<FakeSfn> {
  const executions: FakeExecution[] = [];
  const calls: string[] = [];
  const fail = (type: string, message: string) => ({ status: 400, body: { __type: `com.amazonaws.swf.service.v2.model#${type}`, message } });
  const handle = (op: string, req: Record<string, string>): { status: number; body: unknown } => {
    switch (op) {
      case 'StartExecution': {
        const machine = req.stateMachineArn ?? '';
        const name = req.name ?? randomUUID();
        const express = machine.includes('express');
        const existing = executions.find((e) => e.stateMachineArn === machine && e.name === name);
        if (existing && !express) {
          if (existing.input !== req.input) return fail('ExecutionAlreadyExists', `Execution Already Exists: '${existing.executionArn}'`);
          return { status: 200, body: { executionArn: existing.executionArn, startDate: Date.now() / 1000 } };
        }
        const executionArn = express
          ? `${machine.replace(':stateMachine:', ':express:')}:${name}:${randomUUID()}`
          : `${machine.replace(':stateMachine:', ':execution:')}:${name}`;
        executions.push({ executionArn, stateMachineArn: machine, name, input: req.input ?? '{}', status: 'RUNNING' });
        return { status: 200, body: { executionArn, startDate: Date.now() / 1000 } };
      }
      case 'DescribeExecution': {
        const found = executions.find((e) => e.executionArn === req.executionArn && !e.executionArn.includes(':express:'));
        if (!found) return fail('ExecutionDoesNotExist', `Execution Does Not Exist: '${req.executionArn}'`);
        return {
          status: 200,
          body: {
            executionArn: found.executionArn,
            stateMachineArn: found.stateMachineArn,
            name: found.name,
            status: found.status,
            input: found.input,
            startDate: Date.now() / 1000,
          },
        };
      }
      case 'StopExecution': {
        const found = executions.find((e) => e.executionArn === req.executionArn && !e.executionArn.includes(':express:'));
        if (!found) return fail('ExecutionDoesNotExist', `Execution Does Not Exist: '${req.executionArn}'`);
        if (found.status === 'RUNNING') found.status = 'ABORTED';
        return { status: 200, body: { stopDate: Date.now() / 1000 } };
      }
      default:
        return fail('UnknownOperationException', `the fake does not serve ${op}`);
    }
  };
  const server: Server = createServer(async (req, res) => {
    const op = String(req.headers['x-amz-target'] ?? '').replace('AWSStepFunctions.', '');
    calls.push(op);
    const { status, body } = handle(op, JSON.parse((await readBody(req)) || '{}') as Record<string, string>);
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new SFNClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
  return {
    endpoint,
    client,
    executions,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        client.destroy();
        server.close(() => resolve());
      }),
  };
}
