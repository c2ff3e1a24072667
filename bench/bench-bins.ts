// The builds a bench alternates in one sitting (the machine is noisy): BENCH_BINS="main=/path/to/bin/flowmend.cjs,
// new=bin/flowmend.cjs", each label's bin in turn; an entry may add arguments after the path ("w0=bin/flowmend.cjs
// --workers 0"). Without it, this checkout's bin, labelled `this`.
import { join, resolve } from 'node:path';

export interface BenchBin {
  label: string;
  bin: string;
  args: string[];
}

export const benchBins = (repo: string): BenchBin[] =>
  (process.env.BENCH_BINS ?? `this=${join(repo, 'bin', 'flowmend.cjs')}`).split(',').map((entry) => {
    const [label, spec] = entry.includes('=') ? (entry.split('=', 2) as [string, string]) : [entry, entry];
    const [path, ...args] = spec.split(' ').filter(Boolean);
    return { label, bin: resolve(path as string), args };
  });
