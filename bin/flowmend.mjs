#!/usr/bin/env node
// The `flowmend` bin: loads the TypeScript CLI through tsx's loader, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
await import('./flowmend.ts');
