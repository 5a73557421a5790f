import { describe, expect, it } from 'vitest';
import { formatBytes, formatCpu, formatDuration, formatExit } from './format';

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
});
