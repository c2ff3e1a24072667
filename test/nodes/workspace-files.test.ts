import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyWorkspaceFile, deleteWorkspaceFile, moveWorkspaceFile, readWorkspaceFile, writeWorkspaceFile } from '../../functions/nodes/workspace-files.ts';
import { makeTempDir } from '../support/cli-process.ts';

/* The walk's own rules (workspace-walk.ts), beside the race it is for (workspace-race.test.ts). */

const root = realpathSync(makeTempDir('ws-files'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let cases = 0;
const workspace = (): { ws: string; outside: string } => {
  cases += 1;
  const ws = join(root, `ws-${cases}`);
  const outside = join(root, `outside-${cases}`);
  mkdirSync(join(ws, 'data'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(ws, 'data', 'a.txt'), 'inside');
  writeFileSync(join(outside, 'a.txt'), 'outside');
  return { ws, outside };
};

const text = async (ws: string, path: string): Promise<string | undefined> => (await readWorkspaceFile(ws, path, 1024)).data?.toString();
const refusal = (code: string) => expect.objectContaining({ code });

describe('files in the workspace, walked without following links out', () => {
  it('follows links that stay inside (relative, absolute, through ..), wherever they stand', async () => {
    const { ws } = workspace();
    symlinkSync('data', join(ws, 'rel'));
    symlinkSync(join(ws, 'data'), join(ws, 'abs'));
    mkdirSync(join(ws, 'deep', 'er'), { recursive: true });
    symlinkSync('../../data/a.txt', join(ws, 'deep', 'er', 'up.txt'));
    expect(await text(ws, 'rel/a.txt')).toBe('inside');
    expect(await text(ws, 'abs/a.txt')).toBe('inside');
    expect(await text(ws, 'deep/er/up.txt')).toBe('inside');
    // A write to a link writes what it names; a delete removes the link itself.
    expect(await writeWorkspaceFile(ws, 'deep/er/up.txt', Buffer.from('new'), false)).toBe(join(ws, 'data', 'a.txt'));
    expect(readFileSync(join(ws, 'data', 'a.txt'), 'utf8')).toBe('new');
    expect(readlinkSync(join(ws, 'deep', 'er', 'up.txt'))).toBe('../../data/a.txt');
    expect(await deleteWorkspaceFile(ws, 'deep/er/up.txt')).toEqual({ path: join(ws, 'deep', 'er', 'up.txt'), existed: true });
    expect(readFileSync(join(ws, 'data', 'a.txt'), 'utf8')).toBe('new');
  });

  it('refuses links leading out, at any place, and never touches what they name', async () => {
    const { ws, outside } = workspace();
    symlinkSync(outside, join(ws, 'out'));
    symlinkSync(join(outside, 'a.txt'), join(ws, 'data', 'out.txt'));
    symlinkSync('../..', join(ws, 'data', 'up'));
    for (const path of ['out/a.txt', 'data/out.txt', `data/up/outside-${cases}/a.txt`, 'data/up/x.txt']) {
      await expect(readWorkspaceFile(ws, path, 1024), path).rejects.toEqual(refusal('PATH_OUTSIDE_WORKSPACE'));
      await expect(writeWorkspaceFile(ws, path, Buffer.from('x'), false), path).rejects.toEqual(refusal('PATH_OUTSIDE_WORKSPACE'));
      await expect(copyWorkspaceFile(ws, 'data/a.txt', path, true), path).rejects.toEqual(refusal('PATH_OUTSIDE_WORKSPACE'));
    }
    await expect(moveWorkspaceFile(ws, 'out/a.txt', 'taken.txt', false)).rejects.toEqual(refusal('PATH_OUTSIDE_WORKSPACE'));
    expect(readFileSync(join(outside, 'a.txt'), 'utf8')).toBe('outside');
  });

  it('says so for a loop of links, a directory, a FIFO (without waiting for a writer) and a missing file', async () => {
    const { ws } = workspace();
    symlinkSync('loop-b', join(ws, 'loop-a'));
    symlinkSync('loop-a', join(ws, 'loop-b'));
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    await expect(readWorkspaceFile(ws, 'loop-a', 1024)).rejects.toEqual(refusal('TOO_MANY_LINKS'));
    await expect(readWorkspaceFile(ws, 'data', 1024)).rejects.toEqual(refusal('NOT_A_FILE'));
    await expect(writeWorkspaceFile(ws, 'data', Buffer.from('x'), false)).rejects.toEqual(refusal('NOT_A_FILE'));
    await expect(readWorkspaceFile(ws, 'pipe', 1024)).rejects.toEqual(refusal('NOT_A_FILE'));
    await expect(readWorkspaceFile(ws, 'data/a.txt/x', 1024)).rejects.toEqual(refusal('NOT_A_FILE'));
    await expect(readWorkspaceFile(ws, 'none/a.txt', 1024)).rejects.toEqual(refusal('FILE_NOT_FOUND'));
    expect(await deleteWorkspaceFile(ws, 'none/a.txt')).toEqual({ path: join(ws, 'none', 'a.txt'), existed: false });
    expect(lstatSync(join(ws, 'pipe')).isFIFO()).toBe(true);
  });

  it('makes missing directories for a write, a copy and a move, and leaves no temp file', async () => {
    const { ws } = workspace();
    await writeWorkspaceFile(ws, 'n/e/w.txt', Buffer.from('one\n'), false);
    await writeWorkspaceFile(ws, 'n/e/w.txt', Buffer.from('two\n'), true);
    await copyWorkspaceFile(ws, 'n/e/w.txt', 'c/copy.txt', false);
    await expect(copyWorkspaceFile(ws, 'n/e/w.txt', 'c/copy.txt', false)).rejects.toEqual(refusal('FILE_EXISTS'));
    await moveWorkspaceFile(ws, 'c/copy.txt', 'm/moved.txt', false);
    expect(await text(ws, 'm/moved.txt')).toBe('one\ntwo\n');
    expect(execFileSync('find', [ws, '-name', '*.tmp']).toString()).toBe('');
  });
});
