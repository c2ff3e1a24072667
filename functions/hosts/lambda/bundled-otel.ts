// Imports types only: infra reads OTEL_FILE at synth without loading the SDK.
import type { startOtel } from '../../adapters/otel/otel-telemetry.ts';

/**
 * The file beside the bundle (`index.mjs`) of each function that writes runs, holding the OpenTelemetry
 * SDK and its OTLP exporters (functions/adapters/otel/otel-telemetry.ts, bundled on its own by the
 * construct's afterBundling hook, and only when the stack names an OTLP endpoint). Inline, the SDK was
 * ~400 KB of every such bundle (Advance: 276 KB became 754), parsed at every cold start, exporter or not.
 */
export const OTEL_FILE = 'otel.mjs';

/** Beside the bundle when this code runs bundled, the adapter's source when it runs from source (tsx, vitest). */
export const otelModuleUrl = (here: string = import.meta.url): string =>
  new URL(here.endsWith('.ts') ? '../../adapters/otel/otel-telemetry.ts' : `./${OTEL_FILE}`, here).href;

/** The SDK's entry, loaded on demand; a bundle deployed without its side file says which file is missing. */
export const importOtel = async (url: string = otelModuleUrl()): Promise<typeof startOtel> => {
  const loaded = (await import(url)) as { startOtel?: typeof startOtel };
  if (typeof loaded.startOtel !== 'function') throw new Error(`${url} does not export startOtel`);
  return loaded.startOtel;
};
