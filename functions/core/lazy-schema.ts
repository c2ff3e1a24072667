import * as z from './zod.ts';

/** A schema built on first use, whose `.unwrap()` reads the built schema (its shape, to extend it). */
export type BuiltOnFirstUse<T extends z.ZodMiniType> = z.ZodMiniLazy<T> & { unwrap(): T };

/**
 * A schema built the first time something parses with it (or reads its shape through `.unwrap()`),
 * not when its module is imported. Every Lambda imports all of core, and building a zod schema costs
 * ~20-30 us per node of it: schemas a Lambda rarely or never uses (a batch's state on a run that has
 * none, MCP server configs, the scheduler's events) are what this defers. It is zod's own `z.lazy`,
 * with the built schema kept, so `.unwrap()` returns the one instance the parses use.
 */
export const builtOnFirstUse = <T extends z.ZodMiniType>(build: () => T): BuiltOnFirstUse<T> => {
  let built: T | undefined;
  const get = (): T => {
    built ??= build();
    return built;
  };
  return Object.assign(z.lazy(get), { unwrap: get });
};
