import { describe, expect, it } from 'vitest';
import type { IrVersionItem } from '../../functions/core/run-model.ts';
import { buildRunReport } from '../../functions/core/run-report.ts';
import { aRun } from '../support/builders.ts';
import { wf } from './repair/support.ts';

const RUN = 'run-report-1';
const ir = wf({ nodes: [{ id: 'a', type: 'shell', params: { command: 'exit 1' } }] });
const version = (v: number, source: IrVersionItem['source'], createdAt: number, more: Partial<IrVersionItem> = {}): IrVersionItem => ({
  runId: RUN,
  version: v,
  ir,
  source,
  createdAt,
  ...more,
});
const usage = { model: 'claude-haiku-4-5', input_tokens: 900, output_tokens: 150, cost_usd: 0.0015 };

describe('buildRunReport: repairs', () => {
  it('lists every attempt with its outcome and why, applied ones with their version, and patches no attempt wrote, in time order', () => {
    const run = aRun({
      runId: RUN,
      irVersion: 2,
      repairs: [
        {
          attempt: 1,
          outcome: 'refused',
          irVersion: 0,
          nodeId: 'a',
          reason: 'the proposal changes nothing',
          problems: ['the proposal changes nothing'],
          usage,
          at: 10,
        },
        { attempt: 2, outcome: 'applied', irVersion: 0, version: 1, nodeId: 'a', reason: 'exit 0 instead', usage, at: 20 },
        { attempt: 1, outcome: 'failed', irVersion: 2, nodeId: 'a', reason: 'an LLM repair needs ANTHROPIC_API_KEY', at: 40 },
      ],
    });
    const versions = [
      version(0, 'original', 0),
      version(1, 'llm', 19, { reason: 'exit 0 instead', diff: ['nodes[0].params.command: "exit 1" -> "exit 0"'], nodesChanged: ['a'], usage }),
      version(2, 'manual', 30, { reason: 'a person fixed it', nodesChanged: ['a'] }),
    ];
    const report = buildRunReport(run, [], [], versions);
    expect(report.repairs).toEqual([
      {
        attempt: 1,
        outcome: 'refused',
        source: 'llm',
        reason: 'the proposal changes nothing',
        problems: ['the proposal changes nothing'],
        nodes_changed: [],
        diff: [],
        tokens: { input: 900, output: 150 },
        cost_usd: 0.0015,
      },
      {
        attempt: 2,
        outcome: 'applied',
        version: 1,
        source: 'llm',
        reason: 'exit 0 instead',
        nodes_changed: ['a'],
        diff: ['nodes[0].params.command: "exit 1" -> "exit 0"'],
        tokens: { input: 900, output: 150 },
        cost_usd: 0.0015,
      },
      {
        attempt: 3,
        outcome: 'applied',
        version: 2,
        source: 'manual',
        reason: 'a person fixed it',
        nodes_changed: ['a'],
        diff: [],
        tokens: { input: 0, output: 0 },
        cost_usd: 0,
      },
      {
        attempt: 4,
        outcome: 'failed',
        reason: 'an LLM repair needs ANTHROPIC_API_KEY',
        nodes_changed: [],
        diff: [],
        tokens: { input: 0, output: 0 },
        cost_usd: 0,
      },
    ]);
  });

  it('reports the repaired versions of a run recorded before attempts were (no `repairs` on its item)', () => {
    const report = buildRunReport(
      aRun({ runId: RUN, irVersion: 1 }),
      [],
      [],
      [version(0, 'original', 0), version(1, 'rules', 5, { reason: 'typo', diff: ['x -> y'], nodesChanged: ['a'] })],
    );
    expect(report.repairs).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'applied', version: 1, source: 'rules', reason: 'typo', diff: ['x -> y'] }),
    ]);
  });
});
