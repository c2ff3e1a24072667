/**
 * What a handler awaits before it returns (the Lambda is frozen after that): the spans and metrics the
 * invocation made go out to the OTLP endpoint. A module of its own, importing nothing, so that every
 * handler can call it; lambda-telemetry.ts sets the work when it loaded an exporter (none otherwise).
 */
let settle: (() => Promise<void>) | undefined;

export const setSettle = (work: () => Promise<void>): void => {
  settle = work;
};

export const settleTelemetry = async (): Promise<void> => {
  await settle?.();
};
