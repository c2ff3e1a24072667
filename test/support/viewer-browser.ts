import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`); playwright's own browser download cannot run here. */
export const CHROMIUM = process.env.FLOWMEND_CHROMIUM ?? '/usr/bin/chromium';

/** Why browser tests cannot run on this machine, or undefined when they can. */
export const noBrowserReason = (): string | undefined =>
  existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (install it with: apt-get update && apt-get install -y chromium)`;

/** Headless Chromium with nothing reaching out to the internet (this machine has none). */
export const launchChromium = async (): Promise<Browser> => {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
};
