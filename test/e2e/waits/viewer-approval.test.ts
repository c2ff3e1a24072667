import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WorkflowInput, WorkflowSchema } from '../../../functions/core/ir.ts';
import { runCli } from '../../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../../functions/hosts/lambda/repair.ts';
import { makeTempDir, REPO, spawnCli, writeWorkflow } from '../../support/cli-process.ts';
import { runCliJson } from '../../support/cli-sandbox.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../../support/fake-anthropic.ts';
import { launchChromium, noBrowserReason } from '../../support/viewer-browser.ts';

const OUTPUT = join(REPO, 'test-output');

/** fetch -> use (fails); the workflow holds an LLM's patch for a person. */
const FAILING: WorkflowInput = {
  repair: { approval: 'llm' },
  nodes: [
    { id: 'fetch', type: 'shell', params: { command: 'echo octocat' } },
    { id: 'use', type: 'shell', params: { command: 'exit 3' } },
  ],
  edges: [{ from: 'fetch', to: 'use' }],
  outputs: { out: { source: '${use.stdout}' } },
};

describe.skipIf(noBrowserReason() !== undefined)('answering a waiting run from the run viewer, in Chromium', () => {
  let dir: string;
  let stateDir: string;
  let stopServe: () => void;
  let served: Promise<number>;
  let origin: string;
  let browser: Browser;
  let fake: FakeAnthropic;

  beforeAll(async () => {
    dir = makeTempDir('viewer-approval');
    stateDir = join(dir, 'state');
    fake = await startFakeAnthropic();
    const stopped = new Promise<void>((resolve) => (stopServe = resolve));
    origin = await new Promise<string>((resolve, reject) => {
      let seen = '';
      served = runCli(['serve', '--port', '0', '--state-dir', stateDir], {
        stdout: (text) => {
          seen += text;
          const match = /Run viewer: (http:\/\/127\.0\.0\.1:\d+)\/ui\//.exec(seen);
          if (match?.[1]) resolve(match[1]);
        },
        stderr: (text) => (seen += text),
        env: {},
        untilStopped: () => stopped,
      });
      served.then((code) => reject(new Error(`serve stopped (${code}) before printing its URL: ${seen}`)), reject);
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    stopServe?.();
    await served;
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the held repair as a diff with its cost, and Apply repair applies it: the run goes on to success', async () => {
    const fixed = WorkflowSchema.parse(structuredClone(FAILING));
    const use = fixed.nodes.find((n) => n.id === 'use');
    if (use) use.params.command = 'echo fixed ${fetch.stdout}';
    fake.enqueue({ text: JSON.stringify({ workflow: fixed, reason: 'use echoes what fetch read' }), usage: { input_tokens: 900, output_tokens: 150 } });
    const held = await runCliJson<{ run_id: string; status: string }>(stateDir, ['run', writeWorkflow(dir, 'held', FAILING)], {
      makeRepairHandler: envRepairHandler({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.baseURL }),
    });
    expect(held.json.status).toBe('waiting');

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${origin}/ui/runs/${held.json.run_id}`);
    const panel = page.locator('.wait-panel.wait-repair-approval');
    await panel.waitFor();
    expect(await panel.locator('.reason').textContent()).toBe('use echoes what fetch read');
    expect(await panel.locator('.diff del').textContent()).toBe('"exit 3"');
    expect(await panel.locator('.diff ins').textContent()).toBe('"echo fixed ${fetch.stdout}"');
    expect(await panel.locator('.usage').textContent()).toMatch(/900 in \+ 150 out tokens, \$0\.\d+/);
    expect(await page.locator('#run-status').textContent()).toContain('a repair waits for approval');

    await page.screenshot({ path: join(OUTPUT, 'run-page-waiting.png'), fullPage: true });
    await panel.getByLabel('Comment').fill('checked the diff');
    await panel.getByRole('button', { name: 'Apply repair' }).click();
    await page.waitForSelector('main[data-status="succeeded"]', { timeout: 30_000 });
    expect(await page.locator('.graph [data-node-id="use"]').getAttribute('data-status')).toBe('completed');
    expect(await page.locator('.wait-panel').count()).toBe(0);
    await page.screenshot({ path: join(OUTPUT, 'run-page-approved.png'), fullPage: true });
    const report = await (await fetch(`${origin}/runs/${held.json.run_id}`)).json();
    expect(report).toMatchObject({ status: 'succeeded', result: { out: 'fixed octocat' }, repairs: [{ outcome: 'applied', source: 'llm' }] });
    const events = (await (await fetch(`${origin}/runs/${held.json.run_id}/events`)).json()) as { events: { type: string; message?: string }[] };
    expect(events.events.find((e) => e.type === 'wait_answered')?.message).toBe('approved by viewer: checked the diff');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a gate with its params and denies it from the page', async () => {
    const gated = await runCliJson<{ run_id: string; status: string }>(stateDir, [
      'run',
      writeWorkflow(dir, 'gated', { nodes: [{ id: 'send', type: 'shell', approval: 'required', params: { command: 'echo sent' } }] }),
    ]);
    expect(gated.json.status).toBe('waiting');
    const page = await browser.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${origin}/ui/runs/${gated.json.run_id}`);
    const panel = page.locator('.wait-panel.wait-approval');
    await panel.waitFor();
    expect(await page.locator('.graph [data-node-id="send"]').getAttribute('data-status')).toBe('waiting');
    expect(JSON.parse((await panel.locator('.preview').textContent()) ?? '{}')).toEqual({ command: 'echo sent' });
    await panel.getByRole('button', { name: 'Deny' }).click();
    await page.waitForSelector('main[data-status="failed"]', { timeout: 30_000 });
    expect(await page.locator('.issue').first().textContent()).toContain('DENIED');
    await page.close();
  });
  it('says what a run waiting for a concurrency slot waits for: the key, the limit, the holders, its place in line', async () => {
    const marker = join(dir, 'holding');
    const workflow = (command: string): WorkflowInput => ({
      concurrency: { key: 'deploys', limit: 1 },
      nodes: [{ id: 'deploy', type: 'shell', params: { command } }],
    });
    const holder = spawnCli(['run', writeWorkflow(dir, 'holder', workflow(`touch ${marker}; sleep 30`))], { stateDir });
    for (let i = 0; i < 600 && !existsSync(marker); i += 1) await new Promise((done) => setTimeout(done, 50));
    const queued = await runCliJson<{ run_id: string; status: string }>(stateDir, ['run', writeWorkflow(dir, 'queued', workflow('echo mine'))]);
    expect(queued.json.status).toBe('waiting');
    const page = await browser.newPage();
    await page.goto(`${origin}/ui/runs/${queued.json.run_id}`);
    const panel = page.locator('.wait-panel');
    await panel.waitFor();
    expect(await panel.textContent()).toContain("The run waits for a concurrency slot of 'deploys': limit 1, 1 holding, #1 in line");
    await page.close();
    holder.child.kill('SIGKILL');
    await holder.done;
    await runCliJson(stateDir, ['cancel', queued.json.run_id]);
  });
});
