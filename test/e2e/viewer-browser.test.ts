import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { blockingCommand, makeTempDir, REPO, waitForFile, writeWorkflow } from '../support/cli-process.ts';
import { runCliJson } from '../support/cli-sandbox.ts';
import { launchChromium, noBrowserReason } from '../support/viewer-browser.ts';

const OUTPUT = join(REPO, 'test-output');

/** A run that fails on a template typo the rules repair, then succeeds with `fetch` replayed. */
const TYPO = {
  description: 'greet a user, loudly',
  nodes: [
    { id: 'fetch', type: 'shell', params: { command: `echo '{"user": {"login": "ada", "api_token": "s3cr3t"}}'` } },
    { id: 'shout', type: 'shell', params: { stdin: '${fetch.stdout.user.logn}', command: 'tr a-z A-Z' } },
    { id: 'count', type: 'transform', params: { input: '${shout.stdout}', expression: '$length($)' } },
  ],
  edges: [
    { from: 'fetch', to: 'shout' },
    { from: 'shout', to: 'count' },
  ],
};

const skipReason = noBrowserReason();

describe.skipIf(skipReason !== undefined)('the run viewer in Chromium', () => {
  let dir: string;
  let stateDir: string;
  let stopServe: () => void;
  let served: Promise<number>;
  let origin: string;
  let browser: Browser;

  /** The real CLI, in this process (one process start less per command on a busy machine); rules-only repair, as without an API key. */
  const cli = (argv: string[]) => runCliJson(stateDir, argv, { makeRepairHandler: envRepairHandler({}) });

  beforeAll(async () => {
    dir = makeTempDir('viewer');
    stateDir = join(dir, 'state');
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
    mkdirSync(OUTPUT, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    stopServe?.();
    await served;
    rmSync(dir, { recursive: true, force: true });
  });

  const nodeStatus = (page: Page, id: string) => page.locator(`.graph [data-node-id="${id}"]`).getAttribute('data-status');

  it('lists runs by status and draws a repaired run: node statuses, the edges taken, the repair and its diff, redacted outputs', async () => {
    const { json: report } = await cli(['run', writeWorkflow(dir, 'greet-user', TYPO)]);
    expect(report.status).toBe('succeeded');

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    // The server's root leads to the viewer's runs list.
    await page.goto(`${origin}/`);
    await page.waitForSelector('table.runs tbody tr');
    expect(page.url()).toBe(`${origin}/ui/`);
    // From the runs list, filtered to succeeded runs, to the run's page.
    await page.goto(`${origin}/ui/?status=succeeded`);
    await page.waitForSelector('table.runs tbody tr');
    expect(new Set(await page.locator('table.runs .status-tag').allTextContents())).toEqual(new Set(['succeeded']));
    await page.getByRole('link', { name: String(report.run_id) }).click();
    await page.waitForSelector('.graph [data-node-id="count"]');

    expect(await nodeStatus(page, 'fetch')).toBe('replayed');
    expect(await nodeStatus(page, 'shout')).toBe('completed');
    expect(await nodeStatus(page, 'count')).toBe('completed');
    expect(await page.locator('.graph [data-node-id="shout"] .badge.repaired').count()).toBe(1);
    expect(await page.locator('.graph .edge[data-taken="true"]').count()).toBe(2);
    await expect.poll(() => page.locator('#run-status').textContent()).toContain('succeeded');
    // A succeeded run has nothing to resume or cancel: no action is offered.
    expect(await page.locator('.actions button').count()).toBe(0);

    // The repair: its source, the diff line, and the node it changed ringed on the graph when chosen.
    const repair = page.locator('.version[data-version="1"]');
    expect(await repair.locator('.source-tag').textContent()).toBe('rules');
    expect(await repair.locator('.diff del').textContent()).toBe('${fetch.stdout.user.logn}');
    expect(await repair.locator('.diff ins').textContent()).toBe('${fetch.stdout.user.login}');
    await repair.getByRole('button', { name: /Show changed nodes/ }).click();
    await page.waitForSelector('.graph [data-node-id="shout"].changed');
    expect(await page.locator('.graph .node.changed').count()).toBe(1);

    // Keyboard: Tab to a node, Enter shows it; its outputs come with the token redacted.
    await page.locator('.graph [data-node-id="fetch"]').focus();
    await page.keyboard.press('Enter');
    const details = page.locator('.node-details[data-node-id="fetch"]');
    await details.waitFor();
    const outputs = (await details.locator('.outputs pre').textContent()) ?? '';
    expect(outputs).toContain('ada');
    expect(outputs).toContain('[redacted]');
    expect(outputs).not.toContain('s3cr3t');
    expect(await page.content()).not.toContain('s3cr3t');

    await page.screenshot({ path: join(OUTPUT, 'run-page.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("links a workflow node to its child run's page, and the child's page back to its parent", async () => {
    const childIr = {
      nodes: [{ id: 'inner', type: 'transform', params: { input: 'kid', expression: '$uppercase($)' } }],
      outputs: { loud: { source: '${inner.result}' } },
    };
    const { json: report } = await cli([
      'run',
      writeWorkflow(dir, 'nested-parent', {
        nodes: [{ id: 'sub', type: 'workflow', params: { workflow_ir: childIr, output_mapping: { loud: 'loud' } } }],
        outputs: { loud: { source: '${sub.loud}' } },
      }),
    ]);
    expect(report.status).toBe('succeeded');
    const childId = (report.children as { run_id: string }[] | undefined)?.[0]?.run_id ?? '';
    expect(childId).not.toBe('');

    const page = await browser.newPage();
    await page.goto(`${origin}/ui/runs/${report.run_id}`);
    await page.locator('.graph [data-node-id="sub"]').click();
    await page.locator(`.node-details[data-node-id="sub"] a[data-child-run="${childId}"]`).click();
    await page.waitForSelector(`main[data-run-id="${childId}"] .graph [data-node-id="inner"]`);
    expect(new URL(page.url()).pathname).toBe(`/ui/runs/${childId}`);
    await page.locator(`a[data-parent-run="${report.run_id}"]`).click();
    await page.waitForSelector(`main[data-run-id="${report.run_id}"] .graph [data-node-id="sub"]`);
    await page.close();
  });

  it('follows a running run as it moves on, without reloading the page', async () => {
    const wait = blockingCommand(dir, 'slow', { countFirst: true });
    const live = cli([
      'run',
      writeWorkflow(dir, 'slow-one', {
        nodes: [
          { id: 'slow', type: 'shell', params: { command: wait } },
          { id: 'after', type: 'transform', params: { input: '${slow.stdout}', expression: '$uppercase($)' } },
        ],
        edges: [{ from: 'slow', to: 'after' }],
      }),
    ]);
    await waitForFile(join(dir, 'slow.started'), 'the slow node to start');
    const listed = (await (await fetch(`${origin}/runs?status=running&workflow=slow-one`)).json()) as { runs: { run_id: string }[] };
    const runId = listed.runs[0]?.run_id;
    expect(runId).toBeDefined();

    const page = await browser.newPage();
    await page.goto(`${origin}/ui/runs/${runId}`);
    await page.waitForSelector('.graph [data-node-id="slow"][data-status="running"]');
    expect(await nodeStatus(page, 'after')).toBe('pending');
    await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));

    writeFileSync(join(dir, 'go'), '');
    await page.waitForSelector('.graph [data-node-id="after"][data-status="completed"]', { timeout: 30_000 });
    await page.waitForSelector('main[data-status="succeeded"]');
    expect(await nodeStatus(page, 'slow')).toBe('completed');
    expect(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument)).toBe(true);
    expect((await live).json.status).toBe('succeeded');
    await page.close();
  });

  it('cancels a running run and resumes it from its page, each after a confirm', async () => {
    const own = join(dir, 'cancel');
    mkdirSync(own);
    const wait = blockingCommand(own, 'held', { countFirst: true });
    const workflow = {
      nodes: [
        { id: 'held', type: 'shell', params: { command: wait } },
        { id: 'then', type: 'transform', params: { input: '${held.stdout}', expression: '$uppercase($)' } },
      ],
      edges: [{ from: 'held', to: 'then' }],
    };
    const started = await fetch(`${origin}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workflow, params: {} }),
    });
    expect(started.status).toBe(202);
    const { run_id: runId } = (await started.json()) as { run_id: string };
    await waitForFile(join(own, 'held.started'), 'the held node to start');

    const page = await browser.newPage();
    const questions: string[] = [];
    page.on('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.accept();
    });
    await page.goto(`${origin}/ui/runs/${runId}`);
    await page.waitForSelector('.graph [data-node-id="held"][data-status="running"]');
    // A running run offers Cancel only; a cancelled one Resume only.
    expect(await page.locator('button[data-action]').evaluateAll((buttons) => buttons.map((b) => b.getAttribute('data-action')))).toEqual(['cancel']);

    await page.getByRole('button', { name: 'Cancel…' }).click();
    await page.waitForSelector('main[data-status="cancelled"]');
    expect(questions.at(-1)).toContain(`Cancel run ${runId}?`);
    expect(await nodeStatus(page, 'then')).toBe('skipped');
    expect(await page.locator('button[data-action]').evaluateAll((buttons) => buttons.map((b) => b.getAttribute('data-action')))).toEqual(['resume']);
    // The visit the cancel cut off did not run again: its note says neither that nor "after a crash".
    const notes = () => page.locator('.steps-table tbody tr td:last-child').allTextContents();
    expect((await notes()).join('|')).not.toMatch(/ran again|crash/);

    writeFileSync(join(own, 'go'), '');
    await page.getByRole('button', { name: 'Resume…' }).click();
    await page.waitForSelector('main[data-status="succeeded"]', { timeout: 30_000 });
    expect(questions.at(-1)).toContain(`Resume run ${runId}?`);
    expect(await nodeStatus(page, 'then')).toBe('completed');
    // The resumed visit did run again, and says so; a succeeded run offers no action.
    await expect.poll(async () => (await notes()).filter((n) => n.includes('ran again after an interruption')).length).toBe(1);
    expect(await page.locator('button[data-action]').count()).toBe(0);
    await page.close();
  });
});

// Without a browser the suite above is skipped; this says why in the test report.
if (skipReason !== undefined) {
  describe('the run viewer in Chromium (skipped)', () => {
    it.skip(`is skipped: ${skipReason}`, () => {});
  });
}
