import type { NodeCatalog } from './node-type.ts';
import { applyManualPatch } from './repair/index.ts';
import type { IrVersionItem } from './run-model.ts';
import { recordsOfRun } from './run-report.ts';
import type { RunStore } from './run-store.ts';

export type PatchCheck = { ok: true; item: IrVersionItem } | { ok: false; message: string; problems: string[] };

/**
 * A person's patch for resume (`flowmend resume --workflow`, `POST /runs/{id}/resume`): the same schema,
 * validation and frozen-node checks as a repair, against the run's current workflow version.
 */
export const checkRunPatch = async (
  store: RunStore,
  runId: string,
  patch: unknown,
  /** `source` names where the patch came from (a file), in the message when it cannot be applied. */
  options: { catalog: NodeCatalog; now: number; reason: string; source?: string },
): Promise<PatchCheck> => {
  const run = await store.getRun(runId);
  if (!run) return { ok: false, message: `no run '${runId}'`, problems: [] };
  const current = await store.getIrVersion(runId, run.irVersion);
  if (!current) return { ok: false, message: `run ${runId} has no workflow version ${run.irVersion}`, problems: [] };
  const result = applyManualPatch({
    run,
    current,
    steps: await recordsOfRun(store, run),
    patch,
    catalog: options.catalog,
    now: options.now,
    reason: options.reason,
  });
  if (!result.ok)
    return {
      ok: false,
      message: `the patch${options.source === undefined ? '' : ` in ${options.source}`} cannot be applied to run ${runId}:\n${result.problems.map((p) => `  - ${p}`).join('\n')}`,
      problems: result.problems,
    };
  return result;
};
