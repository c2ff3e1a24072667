import type { NodeCatalog } from '../../core/index.ts';
import { InvalidInputError, prepareRun, type RunRequest, type RunSpec } from '../../core/index.ts';

/** Core's `prepareRun` (the CLI's and StartRun's checks), its refusal as the InvalidInputError the API answers 422 with. */
export const prepareStart = (request: RunRequest, catalog: NodeCatalog): RunSpec => {
  const prepared = prepareRun(request, catalog);
  if (!prepared.ok) {
    throw new InvalidInputError(prepared.message, {
      details: {
        stage: prepared.stage,
        ...(prepared.issues ? { issues: prepared.issues } : {}),
        ...(prepared.problems ? { problems: prepared.problems } : {}),
      },
    });
  }
  return prepared.spec;
};
