import { sameJson } from './cache-key.ts';
import type { Workflow } from './ir.ts';
import type { NodeCatalog } from './node-type.ts';
import { parseWorkflow } from './parse-workflow.ts';
import { carryPatch, workflowDistance } from './repair/carry-patch.ts';
import { applyManualPatch } from './repair/index.ts';
import type { IrVersionItem, NodeRecord, RunItem } from './run-model.ts';
import { withPendingRecords } from './run-report.ts';
import type { RunStore } from './run-store.ts';

/**
 * `run`: the run as the check read it (a claim can take it over: `ClaimOptions.read`); `listed`: its records as
 * the check listed them (the store's listing, without those the item carries), which the walk of a resume
 * launched in this process takes instead of listing them again (LaunchRequest.resumed); `missing`: there is no such run.
 */
export type PatchCheck =
  | { ok: true; item: IrVersionItem; run: RunItem; listed: NodeRecord[] }
  | { ok: false; message: string; problems: string[]; missing?: true };

/** The versions of a run, oldest first (a run has a handful: the original, then one per repair or patch). */
const versionsOf = async (store: RunStore, run: RunItem): Promise<IrVersionItem[]> => {
  const versions: IrVersionItem[] = [];
  for (let v = 0; v <= run.irVersion; v += 1) {
    const item = await store.getIrVersion(run.runId, v);
    if (item) versions.push(item);
  }
  return versions;
};

/**
 * The version a patch was made from: the one it differs least from (the newest of equals). A patch made from
 * the file the run started with is nearest the original; one made from `flowmend show --workflow`, the current.
 */
const baseOf = (patch: Workflow, versions: readonly IrVersionItem[]): IrVersionItem | undefined => {
  let best: { item: IrVersionItem; distance: number } | undefined;
  for (const item of versions) {
    const distance = workflowDistance(item.ir, patch);
    if (!best || distance <= best.distance) best = { item, distance };
  }
  return best?.item;
};

/**
 * A person's patch for resume (`flowmend resume --workflow`, `POST /runs/{id}/resume`): the same schema,
 * validation and frozen-node checks as a repair, against the run's current workflow version. A patch made
 * from an earlier version (the file the run started from, before a repair) is carried onto the current
 * one first: what it changed from that version is applied, and the repairs made since are kept.
 */
export const checkRunPatch = async (
  store: RunStore,
  runId: string,
  patch: unknown,
  /** `source` names where the patch came from (a file), in the message when it cannot be applied. */
  options: { catalog: NodeCatalog; now: number; reason: string; source?: string },
): Promise<PatchCheck> => {
  const run = await store.getRun(runId);
  if (!run) return { ok: false, message: `no run '${runId}'`, problems: [], missing: true };
  const current = await store.getIrVersion(runId, run.irVersion);
  if (!current) return { ok: false, message: `run ${runId} has no workflow version ${run.irVersion}`, problems: [] };
  const parsed = parseWorkflow(patch);
  const base = parsed.ok && run.irVersion > 0 ? baseOf(parsed.workflow, await versionsOf(store, run)) : undefined;
  const carried = parsed.ok && base && base.version !== current.version ? carryPatch(base.ir, current.ir, parsed.workflow) : undefined;
  if (carried && base && sameJson(carried, current.ir)) {
    return {
      ok: false,
      message: `the patch${options.source === undefined ? '' : ` in ${options.source}`} changes nothing that version ${current.version} of run ${runId} does not already have (it was made from version ${base.version}; see flowmend show ${runId} --workflow)`,
      problems: ['the patch changes nothing'],
    };
  }
  const listed = await store.listRecords(runId);
  const result = applyManualPatch({
    run,
    current,
    steps: withPendingRecords(listed, run),
    // The parsed patch, which applyManualPatch's own parse gives back as it is (a second parse of the raw one took ~1 ms a 100 nodes).
    patch: carried ?? (parsed.ok ? parsed.workflow : patch),
    catalog: options.catalog,
    now: options.now,
    reason: carried && base ? `${options.reason} (made from version ${base.version}, carried onto version ${current.version})` : options.reason,
  });
  if (!result.ok)
    return {
      ok: false,
      message: `the patch${options.source === undefined ? '' : ` in ${options.source}`} cannot be applied to run ${runId}${carried && base ? ` (made from version ${base.version}, carried onto version ${current.version})` : ''}:\n${result.problems.map((p) => `  - ${p}`).join('\n')}`,
      problems: result.problems,
    };
  return { ...result, run, listed };
};
