import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeDir } from '../../adapters/make-dir.ts';
import type { AslDefinition } from '../../core/index.ts';

/**
 * Definitions that passed Step Functions' validation before: the local host validates a definition it
 * has not seen and skips one it has. Validating compiles the ASL schemas with ajv (about 18 ms of a CLI
 * command here), and the definition only changes with the build or the runner catalog, so remembering
 * the definition's hash keeps validation on at no cost to each command.
 */
export interface DefinitionMemo {
  /** Whether a definition with this key passed validation before. */
  has(key: string): boolean;
  /** Remembers that a definition with this key passed validation. */
  add(key: string): void;
}

/** What a definition is remembered by: the SHA-256 of its JSON (the ASL that was validated, byte for byte). */
export const definitionKey = (definition: AslDefinition): string => createHash('sha256').update(JSON.stringify(definition)).digest('hex');

/**
 * Definitions validated when the CLI was built: `npm run build` (scripts/build.mjs) runs the bundle once
 * and keeps what that run validated in `dist/validated-definitions/`, beside the chunk this module is
 * bundled into, so that the first command on a new state dir does not pay ajv's compile of the ASL
 * schemas (~0.4 s). From source (tsx) the folder does not exist and nothing is shipped.
 */
export const SHIPPED_DEFINITIONS_DIR = fileURLToPath(new URL('./validated-definitions/', import.meta.url));

/**
 * A memo in a folder of the state dir, one empty file per validated definition, so that every process
 * on the state dir shares it; plus read-only folders of definitions validated elsewhere (the build's).
 * A folder that cannot be written only means validating again next time. Without `dir` (a store with no
 * state dir), only the read-only folders are consulted.
 */
export class FileDefinitionMemo implements DefinitionMemo {
  constructor(
    private readonly dir: string | undefined,
    private readonly shipped: readonly string[] = [],
  ) {}

  /** The state dir's memo, backed by the definitions the build validated. */
  static inStateDir(stateDir: string | undefined): FileDefinitionMemo {
    return new FileDefinitionMemo(stateDir === undefined ? undefined : join(stateDir, 'validated-definitions'), [SHIPPED_DEFINITIONS_DIR]);
  }

  has(key: string): boolean {
    return [this.dir, ...this.shipped].some((dir) => dir !== undefined && existsSync(join(dir, key)));
  }

  add(key: string): void {
    if (this.dir === undefined) return;
    try {
      // Not mkdirSync's recursive mode, which never returns for some paths on Node 20 (see makeDir).
      makeDir(this.dir);
      writeFileSync(join(this.dir, key), '');
    } catch {
      // Read-only or full: the definition is validated again by the next process, nothing is lost.
    }
  }
}
