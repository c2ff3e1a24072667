import type { LocalHostOptions, RepairHandler } from './local-host.ts';

/** The Repair state's handler from the environment (the node catalog, the Anthropic SDK), loaded at the first repair, not at every start. */
export const lazyRepairHandler: NonNullable<LocalHostOptions['makeRepairHandler']> = (deps) => {
  let handler: Promise<RepairHandler> | undefined;
  return async (event) => {
    handler ??= import('../lambda/repair.ts').then(({ envRepairHandler }) => envRepairHandler(process.env)(deps));
    return (await handler)(event);
  };
};
