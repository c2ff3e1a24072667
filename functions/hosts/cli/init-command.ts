import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo, CliOutput } from './cli-output.ts';
import { EXIT } from './cli-output.ts';
import { CDK_APP, CDK_JSON, GITIGNORE, HELLO_TEST, HELLO_WORKFLOW, README, SCRIPTS } from './init-templates.ts';

interface FlowmendManifest {
  version: string;
  devDependencies?: Record<string, string>;
}

/** flowmend's own package.json: the nearest one named flowmend above this module (the bundle's, or the source's). */
const ownManifest = (): FlowmendManifest => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as FlowmendManifest & { name?: string };
      if (manifest.name === 'flowmend') return manifest;
    }
    if (dirname(dir) === dir) throw new Error('flowmend init: cannot find the package.json of flowmend itself');
    dir = dirname(dir);
  }
};

/** The packages the CDK app needs, at the versions flowmend is built and tested with. */
const CDK_PACKAGES = ['aws-cdk-lib', 'constructs', 'aws-cdk'];

/**
 * `flowmend init [DIR]`: a project that passes its own test (`npm test`) as written: a workflow, its test through
 * the local host, a CDK app with the engine's construct, and the scripts. Writes no file that exists (it says
 * which, and writes nothing); an existing package.json keeps everything it has and gains what is missing.
 */
export const initCommand = (command: { dir: string }, io: CliIo, out: CliOutput): number => {
  const root = resolve(command.dir);
  const files: Record<string, string> = {
    'workflows/hello.json': HELLO_WORKFLOW,
    'test/hello.test.mjs': HELLO_TEST,
    'cdk/app.mjs': CDK_APP,
    'cdk.json': CDK_JSON,
    '.gitignore': GITIGNORE,
    'README.md': README,
  };
  const taken = Object.keys(files).filter((file) => existsSync(join(root, file)));
  if (taken.length > 0)
    return out.fail(EXIT.usage, `${root} already has ${taken.join(', ')}: init writes into a new or empty project only`, { existing: taken });

  const manifest = ownManifest();
  const packageFile = join(root, 'package.json');
  const existing = existsSync(packageFile);
  let project: Record<string, unknown>;
  try {
    project = existing ? (JSON.parse(readFileSync(packageFile, 'utf8')) as Record<string, unknown>) : {};
  } catch (error) {
    return out.fail(EXIT.usage, `${packageFile} is not JSON (${(error as Error).message}): fix it or init in another directory`);
  }
  if (typeof project !== 'object' || project === null || Array.isArray(project)) return out.fail(EXIT.usage, `${packageFile} is not a JSON object`);
  const record = (key: string) => ({ ...((project[key] as Record<string, string> | undefined) ?? {}) });
  const dependencies = record('dependencies');
  const devDependencies = record('devDependencies');
  if (!dependencies.flowmend && !devDependencies.flowmend) dependencies.flowmend = `^${manifest.version}`;
  for (const name of CDK_PACKAGES) {
    const version = manifest.devDependencies?.[name];
    if (version !== undefined && !dependencies[name] && !devDependencies[name]) devDependencies[name] = version;
  }
  const next = {
    name:
      basename(root)
        .toLowerCase()
        .replace(/[^a-z0-9._-]+/g, '-') || 'my-flows',
    version: '0.1.0',
    private: true,
    ...project,
    // init's own files are .mjs: ES modules whatever the project's type.
    type: project.type ?? 'module',
    scripts: { ...SCRIPTS, ...record('scripts') },
    dependencies,
    devDependencies,
  };

  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text, { flag: 'wx' });
  }
  writeFileSync(packageFile, `${JSON.stringify(next, null, 2)}\n`);
  const written = [...Object.keys(files), 'package.json'];
  const where = relative(process.cwd(), root) || '.';
  const steps = [...(where === '.' ? [] : [`cd ${where}`]), 'npm install', 'npm test', 'npx flowmend run workflows/hello.json name=Ada'];
  if (out.json) io.stdout(`${JSON.stringify({ success: true, dir: root, files: written, next: steps }, null, 2)}\n`);
  else io.stdout(`Created a flowmend project in ${root}:\n${written.map((f) => `  ${f}\n`).join('')}\nNext:\n${steps.map((s) => `  ${s}\n`).join('')}`);
  return EXIT.ok;
};
