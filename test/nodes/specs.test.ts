import { describe, expect, it } from 'vitest';
import { localRunners } from '../../functions/hosts/local/local-runners.ts';
import { localSpecCatalog } from '../../functions/nodes/local-specs.ts';

describe("localSpecCatalog (what validate checks, without the runners' libraries)", () => {
  it("knows every type the local host runs, with the runner's schema, outputs, capabilities, timeouts, side effects and quoting", () => {
    for (const runner of localRunners) {
      const spec = localSpecCatalog.get(runner.type);
      expect(spec, runner.type).toBeDefined();
      expect(spec?.paramsSchema, runner.type).toBe(runner.paramsSchema);
      expect(spec?.outputKeys, runner.type).toEqual(runner.outputKeys);
      expect(spec?.capabilities, runner.type).toEqual(runner.capabilities);
      expect(spec?.timeoutS({ timeout_s: 7 }), runner.type).toBe(runner.timeoutS({ timeout_s: 7 }));
      expect(spec?.timeoutS({}), runner.type).toBe(runner.timeoutS({}));
      const params = { command: 'x', raw: false, method: 'POST' };
      expect(spec?.sideEffects(params), runner.type).toBe(runner.sideEffects(params));
      expect(spec?.templateQuoting?.(params), runner.type).toEqual(runner.templateQuoting?.(params));
    }
  });
});
