// The little of a browser that the console's modules need under node:test: i18n.js loads
// web/i18n/<code>.json with fetch (which in node does not read file: URLs) and sets <html lang>. `extra` adds
// messages to a language's file ({ en: { 'test.key': 'text' } }), for rules no real message exercises.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function fakeBrowser({ extra = {} } = {}) {
  globalThis.document = { documentElement: {} };
  globalThis.fetch = async (url) => {
    const file = fileURLToPath(url);
    const code = path.basename(file, '.json');
    const messages = { ...JSON.parse(await readFile(file, 'utf8')), ...(extra[code] || {}) };
    return { ok: true, status: 200, json: async () => messages };
  };
}

// The real message files, to check the modules' texts against.
export async function messagesOf(code) {
  return JSON.parse(await readFile(new URL(`../../../web/i18n/${code}.json`, import.meta.url), 'utf8'));
}

// Runs fn with console.warn captured; returns what it warned.
export function warnings(fn) {
  const seen = [];
  const warn = console.warn;
  console.warn = (...args) => seen.push(args.join(' '));
  try {
    fn();
  } finally {
    console.warn = warn;
  }
  return seen;
}

// Runs fn (async) with navigator.languages = `languages`, then puts back the navigator there was (none in
// node 20; node 21 has its own, which a plain assignment may not replace).
export async function withNavigator(languages, fn) {
  const before = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  Object.defineProperty(globalThis, 'navigator', { value: { languages }, configurable: true, writable: true });
  try {
    await fn();
  } finally {
    if (before) Object.defineProperty(globalThis, 'navigator', before);
    else delete globalThis.navigator;
  }
}
