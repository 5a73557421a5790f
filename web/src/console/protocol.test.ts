import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  closeReason,
  consoleUrl,
  linesText,
  parseFrame,
  skippedText,
  statusText,
} from './protocol';

describe('parseFrame', () => {
  it('reads every message of protocol v2', () => {
    expect(parseFrame('{"type":"history","lines":["a","b"]}')).toEqual({
      type: 'history',
      lines: ['a', 'b'],
    });
    expect(parseFrame('{"type":"log","lines":["x"],"ts":"2026-01-01T00:00:00Z"}')).toEqual({
      type: 'log',
      lines: ['x'],
    });
    expect(parseFrame('{"type":"status","status":"running"}')).toEqual({
      type: 'status',
      status: 'running',
    });
    // Every status the panel sends: an install, and a server whose node does not answer.
    for (const status of ['installing', 'unknown'])
      expect(parseFrame(`{"type":"status","status":"${status}"}`)).toEqual({
        type: 'status',
        status,
      });
    expect(parseFrame('{"type":"skipped","lines":12}')).toEqual({ type: 'skipped', lines: 12 });
    expect(
      parseFrame('{"type":"notice","feature":"eula","message":"accept the EULA","extra":1}'),
    ).toEqual({ type: 'notice', feature: 'eula', message: 'accept the EULA' });
    expect(parseFrame('{"type":"error","code":"CONFLICT","message":"Not running"}')).toEqual({
      type: 'error',
      code: 'CONFLICT',
      message: 'Not running',
    });
  });

  it('ignores what is not a frame, without throwing', () => {
    for (const text of [
      'not json',
      'null',
      '[]',
      '{"type":"log","lines":"a"}',
      '{"type":"log","lines":[1]}',
      '{"type":"status","status":"exploded"}',
      '{"type":"skipped","lines":"3"}',
      '{"type":"error"}',
      '{"type":"notice","feature":"eula"}',
      '{"type":"notice","feature":1,"message":"x"}',
      '{"type":"other"}',
    ]) {
      expect(parseFrame(text)).toBeNull();
    }
    expect(parseFrame(new ArrayBuffer(2))).toBeNull();
  });
});

describe('terminal text', () => {
  it('joins a batch into one text, every line ended with CR LF', () => {
    expect(linesText(['a', '\x1b[31mb\x1b[0m'])).toBe('a\r\n\x1b[31mb\x1b[0m\r\n');
    expect(linesText([])).toBe('');
  });

  it('shows skipped lines and status changes as dim lines', () => {
    expect(skippedText(1500)).toBe('\x1b[2m… 1,500 lines skipped\x1b[22m\r\n');
    expect(skippedText(1)).toBe('\x1b[2m… 1 line skipped\x1b[22m\r\n');
    expect(statusText('stopping')).toBe('\x1b[2m[status] stopping\x1b[22m\r\n');
  });
});

describe('closeReason', () => {
  it('keeps away from the panel only when it closed on purpose', () => {
    expect(closeReason(4401)).toBe('signed-out');
    expect(closeReason(4403)).toBe('access-removed');
    expect(closeReason(4404)).toBe('deleted');
    expect(closeReason(4408)).toBe('fell-behind');
    for (const code of [1000, 1001, 1006, 1011, 1009, 4429]) expect(closeReason(code)).toBeNull();
  });
});

describe('backoffDelay', () => {
  it('doubles from 1 s and stops at 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map(backoffDelay)).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
  });
});

describe('consoleUrl', () => {
  it('follows the page: ws: under http:, wss: under https:, the token in the query', () => {
    expect(consoleUrl({ protocol: 'http:', host: '127.0.0.1:8000' }, 'mc', 'a.b/c')).toBe(
      'ws://127.0.0.1:8000/ws/servers/mc/console?token=a.b%2Fc',
    );
    expect(consoleUrl({ protocol: 'https:', host: 'panel.example' }, 'my server', 't')).toBe(
      'wss://panel.example/ws/servers/my%20server/console?token=t',
    );
  });
});
