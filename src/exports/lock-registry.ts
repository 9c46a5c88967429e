// The files this process has made or is making for its state locks (locks, take-over guards, their
// temporaries), and their removal when the process exits or gets a signal nothing else handles.
import { readFileSync, unlinkSync } from 'node:fs';

export interface Owned {
  readonly path: string;
  readonly text: string;
}

/** Registered before a file is created, so that no moment exists where this process has a file
 * that it would itself take for another's. Removed at exit if still holding their text. */
const owned = new Set<Owned>();

export function own(path: string, text: string): Owned {
  const entry = { path, text };
  owned.add(entry);
  watch();
  return entry;
}

export function disown(entry: Owned): void {
  owned.delete(entry);
  if (owned.size === 0) unwatch();
}

export function isOwned(path: string, text: string): boolean {
  for (const entry of owned) if (entry.path === path && entry.text === text) return true;
  return false;
}

// ---- release at exit: the files this process has made and not yet removed.

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let watching = false;

function releaseAllNow(): void {
  for (const { path, text } of owned) {
    try {
      if (readFileSync(path, 'utf8') === text) unlinkSync(path);
    } catch {
      // Gone already, or unreadable: after this process ends the next run takes it over.
    }
  }
  owned.clear();
}

/** A signal nothing else listens to ends the process without 'exit': remove the locks, then let
 * it do what it would have done. A program that handles the signal (the CLI stops cleanly)
 * releases them itself, or exits and 'exit' does. */
function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  releaseAllNow();
  unwatch();
  process.kill(process.pid, signal);
}

function watch(): void {
  if (watching) return;
  watching = true;
  process.on('exit', releaseAllNow);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function unwatch(): void {
  if (!watching) return;
  watching = false;
  process.off('exit', releaseAllNow);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}
