/** Resolves on the first SIGINT or SIGTERM (Ctrl-C): how a serving command is stopped. */
export const untilSignal = (): Promise<void> =>
  new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
