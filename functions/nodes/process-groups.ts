import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A record, on disk, of the process group a shell node's command runs in, so that a command which
 * outlived its host (the CLI or `serve` killed with SIGKILL: its detached group lives on) is ended
 * before the node runs again on resume, instead of running beside its second copy.
 */

/** Where the records live unless the runner is told otherwise: per machine, like the processes they name. */
export const DEFAULT_GROUP_DIR = join(tmpdir(), 'flowmend-process-groups');
/** How long to wait for a killed group to be gone before running the node again anyway. */
const GONE_WAIT_MS = 5_000;
const POLL_MS = 20;

interface GroupRecord {
  pgid: number;
  /** The mark in the environment of everything the command started (markedEnvironment): what left the group. */
  mark?: string;
  /** The leader's start time (clock ticks since boot, /proc), so that a reused pid is not taken for it. */
  startTime?: string;
}

/**
 * One file per run and node, and per item of a batch node: a node runs once at a time within its run, but
 * the items of a batch node run side by side (one file for all of them let each item end another's command).
 */
export const groupRecordPath = (dir: string, runId: string, nodeId: string, item?: number): string => {
  const key = item === undefined ? `${runId}\0${nodeId}` : `${runId}\0${nodeId}\0${item}`;
  return join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
};

interface ProcStat {
  state: string;
  pgrp: number;
  startTime: string;
}

/** Fields of /proc/<pid>/stat after the command name (which may itself hold spaces and parentheses). */
const parseStat = (text: string): ProcStat => {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', pgrp: Number(fields[2]), startTime: fields[19] ?? '' };
};

const readStat = async (pid: string | number): Promise<ProcStat | undefined> => {
  try {
    return parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
};

const hasProc = async (): Promise<boolean> => (await readStat('self')) !== undefined;

/**
 * Whether any process of the group still runs. With /proc: its members that are not zombies (a zombie
 * is dead, and where no init reaps orphans, as in some containers, it stays); without: kill(-pgid, 0).
 */
export const groupAlive = async (pgid: number): Promise<boolean> => {
  if (await hasProc()) {
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readStat(entry);
      if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
    }
    return false;
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Records the group of a command just started (its leader's pid is the group id: the shell is spawned
 * detached). Synchronous, in the same tick as the spawn, so that a host killed once the command has
 * begun its work has almost surely left the record behind (asynchronous writes left a window of
 * several event-loop turns in which the command ran unrecorded).
 */
export const recordGroup = (file: string, pgid: number, mark?: string): void => {
  let startTime: string | undefined;
  try {
    startTime = parseStat(readFileSync(`/proc/${pgid}/stat`, 'utf8')).startTime;
  } catch {
    // No /proc (or the leader is gone already): the pid alone is recorded.
  }
  const record: GroupRecord = { pgid, ...(startTime !== undefined ? { startTime } : {}), ...(mark !== undefined ? { mark } : {}) };
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(file, JSON.stringify(record));
};

// The record's read (there is none, almost always) and its removal are synchronous: one system call each, where
// node:fs/promises would be loaded for them (~2 ms of a process's first shell node here). Only the rare
// leftover group reads /proc and waits, asynchronously. The removal is an unlink: Node 20's rmSync loads its
// rimraf module at its first call (0.5 ms here, against 0.04 for the unlink).
export const forgetGroup = (file: string): void => {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
};

/**
 * Ends the group an earlier run of this node left behind, if one is recorded and still alive: SIGKILL
 * to the whole group, then waits (bounded) until none of it runs. A recorded leader pid now used by
 * another process (its start time differs) is left alone. Answers the group id it ended, if any.
 */
export const endLeftoverGroup = async (file: string): Promise<number | undefined> => {
  let record: GroupRecord;
  try {
    record = JSON.parse(readFileSync(file, 'utf8')) as GroupRecord;
  } catch {
    return undefined;
  }
  const { pgid } = record;
  if (typeof record.mark === 'string') endMarked(record.mark, 0);
  if (!Number.isInteger(pgid) || pgid <= 1) return undefined;
  const leader = await readStat(pgid);
  // The kernel gives no new process a pid still used as a group id: a leader with another start time means the group is gone.
  const reused = leader !== undefined && record.startTime !== undefined && leader.startTime !== record.startTime;
  if (reused || !(await groupAlive(pgid))) {
    forgetGroup(file);
    return undefined;
  }
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Gone between the check and the kill.
  }
  const deadline = Date.now() + GONE_WAIT_MS;
  while (Date.now() < deadline && (await groupAlive(pgid))) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  forgetGroup(file);
  return pgid;
};

/** The variable a command's environment carries its node's mark in (inherited by all it starts, unless cleared); lower case, apart from the engine's FLOWMEND_* names, which never reach a command. */
export const NODE_MARK_VARIABLE = 'flowmend_node_mark';

/** The last pid the kernel gave out, if it says (Linux). */
const lastPid = (): number | undefined => {
  try {
    return Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'));
  } catch {
    return undefined;
  }
};

/**
 * Ends every process whose environment holds `mark` (a command's descendants that left its process group:
 * `setsid`, a daemon that forked twice), as Jenkins' process tree killer does with its cookie. Only the
 * pids given out after `since` (0: every process) are read, so a shell node's end costs one /proc listing
 * and a read per process started meanwhile. Rounds until none is left (one may fork between the read and
 * the kill), at most five. Synchronous: a thread-pool round trip per read cost more than the reads on a
 * loaded machine. Linux only; elsewhere nothing is found. Answers how many were ended.
 */
export const endMarked = (mark: string, since: number): number => {
  const needle = Buffer.from(`${NODE_MARK_VARIABLE}=${mark}\0`);
  const afterAnother = Buffer.concat([Buffer.from([0]), needle]);
  let ended = 0;
  for (let round = 0; round < 5; round += 1) {
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      return ended;
    }
    // Pids given out since `since` run from it to the last one given out, wrapping around at pid_max (32768
    // on many machines): a pid outside that window belongs to an older process.
    const last = lastPid() ?? Number.POSITIVE_INFINITY;
    const fresh = (pid: number): boolean => since <= 0 || (last >= since ? pid > since && pid <= last : pid > since || pid <= last);
    const found: number[] = [];
    for (const entry of entries) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || pid === process.pid || !fresh(pid)) continue;
      let environ: Buffer | undefined;
      try {
        environ = readFileSync(`/proc/${pid}/environ`);
      } catch {
        // Gone, or another user's.
      }
      if (environ !== undefined && (environ.indexOf(needle) === 0 || environ.includes(afterAnother))) found.push(pid);
    }
    if (found.length === 0) return ended;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
        ended += 1;
      } catch {
        // Gone already.
      }
    }
  }
  return ended;
};
