/**
 * How a stop is written as a server's stop command, as in the eggs: `^C` (or `^SIGINT`) is
 * SIGINT, `^SIGTERM` SIGTERM and `^^C` SIGKILL; anything else is a line typed into the console.
 * Read by the host when it stops a server, written by the servers service when a server is made
 * from a template.
 */
import type { StopMethod } from './template.js';

const STOP_SIGNALS: Readonly<Record<string, 'SIGINT' | 'SIGTERM' | 'SIGKILL'>> = {
  '^C': 'SIGINT',
  '^SIGINT': 'SIGINT',
  '^SIGTERM': 'SIGTERM',
  '^^C': 'SIGKILL',
};

/** The stop method a stop command stands for; null: the server has none (it is killed). */
export function stopMethodOf(stopCommand: string | null): StopMethod | null {
  if (stopCommand === null) return null;
  const signal = STOP_SIGNALS[stopCommand];
  return signal ? { type: 'signal', signal } : { type: 'command', command: stopCommand };
}

/** The text stored as a server's stop command for a template's stop method. */
export function stopCommandOf(stop: StopMethod): string {
  if (stop.type === 'command') return stop.command;
  return { SIGINT: '^C', SIGTERM: '^SIGTERM', SIGKILL: '^^C' }[stop.signal];
}
