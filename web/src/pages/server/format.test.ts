import { describe, expect, it } from 'vitest';
import {
  formatAgo,
  formatLastExit,
  formatBytes,
  formatCount,
  formatCpu,
  formatDuration,
  formatExit,
  formatUsage,
} from './format';

describe('server page formats', () => {
  it('shows sizes in binary units, three digits at most', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(230 * 1024 * 1024)).toBe('230 MiB');
    expect(formatBytes(12.4 * 1024 ** 3)).toBe('12.4 GiB');
  });

  it('shows durations by their two largest units', () => {
    expect(formatDuration(45)).toBe('45 s');
    expect(formatDuration(200)).toBe('3 min 20 s');
    expect(formatDuration(2 * 3600 + 5 * 60 + 9)).toBe('2 h 5 min');
    expect(formatDuration(3 * 86_400 + 4 * 3600)).toBe('3 d 4 h');
  });

  it('shows CPU and how the last process ended', () => {
    expect(formatCpu(12.345)).toBe('12.3 %');
    expect(formatCpu(250)).toBe('250 %');
    expect(formatExit({ at: '', code: 0, signal: null })).toBe('exit code 0');
    expect(formatExit({ at: '', code: null, signal: 'SIGKILL' })).toBe('signal SIGKILL');
  });

  it('shows a stop that ended as asked as a clean stop, not by its code', () => {
    expect(formatExit({ at: '', code: 130, signal: null, cleanStop: true })).toBe(
      'stopped cleanly',
    );
    expect(formatExit({ at: '', code: 130, signal: null, cleanStop: false })).toBe('exit code 130');
    const at = '2025-01-01T11:00:00Z';
    const now = new Date('2025-01-01T12:00:00Z');
    expect(formatLastExit({ at, code: null, signal: 'SIGINT', cleanStop: true }, now)).toBe(
      'stopped, 1 h ago',
    );
  });

  it('shows a use against its limit, and alone when there is none', () => {
    const MIB = 1024 * 1024;
    expect(formatUsage(312 * MIB, 512 * MIB, formatBytes)).toBe('312 MiB of 512 MiB');
    expect(formatUsage(143, 200, formatCpu)).toBe('143 % of 200 %');
    expect(formatUsage(12, 64, formatCount)).toBe('12 of 64');
    expect(formatUsage(1.5 * 1024 * MIB, 10 * 1024 * MIB, formatBytes)).toBe('1.5 GiB of 10 GiB');
    expect(formatUsage(312 * MIB, null, formatBytes)).toBe('312 MiB');
    expect(formatUsage(12, null, formatCount)).toBe('12');
  });

  it('says when the kernel ended the server at its memory limit', () => {
    const exit = { at: '', code: null, signal: 'SIGKILL', outOfMemory: true };
    expect(formatExit(exit)).toBe('out of memory (signal SIGKILL)');
    expect(formatExit({ ...exit, outOfMemory: false })).toBe('signal SIGKILL');
  });
});

describe('formatLastExit', () => {
  const now = new Date('2025-01-01T12:00:00Z');
  it('says how and how long ago', () => {
    const at = '2025-01-01T11:55:00Z';
    expect(formatLastExit({ at, code: 3, signal: null }, now)).toBe('exited 3, 5 min ago');
    expect(formatLastExit({ at, code: null, signal: 'SIGKILL' }, now)).toBe('SIGKILL, 5 min ago');
    expect(formatLastExit({ at, code: null, signal: 'SIGKILL', outOfMemory: true }, now)).toBe(
      'out of memory, 5 min ago',
    );
  });
  it('rounds down to the coarsest unit', () => {
    expect(formatAgo('2025-01-01T11:59:30Z', now)).toBe('just now');
    expect(formatAgo('2025-01-01T09:00:00Z', now)).toBe('3 h ago');
    expect(formatAgo('2024-12-30T12:00:00Z', now)).toBe('2 d ago');
  });
});
