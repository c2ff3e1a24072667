/**
 * The runners' clock for `durationMs`, and the local host's for its turn slices: milliseconds on the monotonic
 * clock, as `performance.now()` counts them (from another origin; only differences are used). The `performance`
 * global loads perf_hooks and its timing modules at its first use, ~1.5 ms of a fresh process here (of every
 * `run` and `resume` of the CLI); process.hrtime loads nothing.
 */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;
