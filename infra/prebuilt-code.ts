import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';

/**
 * Where the Lambda code built ahead of time is, relative to the construct's module: set only in the npm
 * package's build of the constructs (scripts/package/build-package.ts defines it), whose code ships in
 * lib/lambda/. From the repository (`cdk synth` here, the tests) it is undefined and the constructs build
 * from the sources (NodejsFunction's esbuild, the Python runner's files written at synth).
 */
const PREBUILT_DIR: string | undefined = process.env.FLOWMEND_PACKAGE_PREBUILT_LAMBDAS;

/** The directory of the prebuilt code when this code runs from the npm package, else undefined. */
export const prebuiltLambdaDir = (): string | undefined => (PREBUILT_DIR === undefined ? undefined : fileURLToPath(new URL(PREBUILT_DIR, import.meta.url)));

/** The side files' directory among the prebuilt bundles (the secret resolver, the OpenTelemetry SDK, the wait services). */
export const PREBUILT_SIDE_DIR = '_side';

/** The Python runner's directory among them (run_code.py and code_wrapper.py, as infra/python-runner.ts writes them). */
export const PREBUILT_PYTHON_DIR = '_python';

/**
 * A handler's prebuilt bundle (`<dir>/<handler>/index.mjs`) with the side files it needs copied beside it,
 * as `afterBundling` puts them when NodejsFunction bundles. A copy, not Docker: `tryBundle` always succeeds,
 * and the asset is hashed by what it holds, so a handler with and without a side file are two assets.
 */
export const prebuiltCode = (dir: string, handler: string, sideFiles: readonly string[]): lambda.Code =>
  lambda.Code.fromAsset(join(dir, handler), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('flowmend-prebuilt-bundles-need-no-docker'),
      local: {
        tryBundle(outputDir) {
          cpSync(join(dir, handler), outputDir, { recursive: true });
          for (const file of sideFiles) {
            const side = join(dir, PREBUILT_SIDE_DIR, file);
            if (!existsSync(side)) throw new Error(`flowmend/cdk: the package has no prebuilt ${file} (${side}): rebuild it (npm pack)`);
            cpSync(side, join(outputDir, file));
          }
          return true;
        },
      },
    },
  });

/** The Python runner's files as the package ships them. */
export const prebuiltPythonCode = (dir: string): lambda.Code => lambda.Code.fromAsset(join(dir, PREBUILT_PYTHON_DIR));
