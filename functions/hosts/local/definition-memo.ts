import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
 * A memo in a folder of the state dir, one empty file per validated definition, so that every process
 * on the state dir shares it. A folder that cannot be written only means validating again next time.
 */
export class FileDefinitionMemo implements DefinitionMemo {
  constructor(private readonly dir: string) {}

  static inStateDir(stateDir: string): FileDefinitionMemo {
    return new FileDefinitionMemo(join(stateDir, 'validated-definitions'));
  }

  has(key: string): boolean {
    return existsSync(join(this.dir, key));
  }

  add(key: string): void {
    try {
      // Not mkdirSync's recursive mode, which never returns for some paths on Node 20 (see makeDir).
      makeDir(this.dir);
      writeFileSync(join(this.dir, key), '');
    } catch {
      // Read-only or full: the definition is validated again by the next process, nothing is lost.
    }
  }
}
