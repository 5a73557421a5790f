import { describe, expect, it } from 'vitest';
import type { Webhook } from '../../hooks/useWebhooks';
import { bodyOf, changesOf, EMPTY_FORM, EVENTS, formOf } from './events';

const hook: Webhook = {
  id: 1,
  url: 'https://example.com/hook',
  events: ['server.crashed', 'backup.failed'],
  description: 'alerts',
  enabled: true,
  createdAt: '2030-01-01T00:00:00.000Z',
  lastDelivery: null,
};

describe('the webhook form', () => {
  it('sends events in the API order, text trimmed', () => {
    const body = bodyOf({
      ...EMPTY_FORM,
      url: ' https://example.com/x ',
      events: new Set(['ticket.created', 'server.started'] as const),
      description: ' hi ',
    });
    expect(body).toEqual({
      url: 'https://example.com/x',
      events: ['server.started', 'ticket.created'],
      description: 'hi',
      enabled: true,
    });
    expect(EVENTS).toHaveLength(10);
  });

  it('changes nothing when nothing was edited, whatever the order of events', () => {
    expect(changesOf(hook, formOf(hook))).toEqual({});
    expect(
      changesOf(hook, { ...formOf(hook), events: new Set(['backup.failed', 'server.crashed']) }),
    ).toEqual({});
  });

  it('sends only what changed', () => {
    expect(
      changesOf(hook, { ...formOf(hook), enabled: false, events: new Set(['server.crashed']) }),
    ).toEqual({ enabled: false, events: ['server.crashed'] });
  });
});
