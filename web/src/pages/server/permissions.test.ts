import { describe, expect, it } from 'vitest';
import {
  beyond,
  heldFrom,
  mayManage,
  PERMISSIONS,
  samePermissions,
  type Permission,
} from './permissions';

describe('permissions', () => {
  it('lists the twelve in the API order, backups split in four', () => {
    expect(PERMISSIONS).toEqual([
      'console.read',
      'console.write',
      'power',
      'files.read',
      'files.write',
      'settings',
      'backups.create',
      'backups.download',
      'backups.restore',
      'backups.delete',
      'schedules',
      'users',
    ]);
  });

  it('knows nothing until told', () => {
    expect(heldFrom(undefined)).toBeNull();
    expect(heldFrom(['power'])?.has('power')).toBe(true);
  });

  it('manages only people whose permissions are within the caller’s', () => {
    const held = new Set(['files.read', 'files.write', 'users'] as const);
    expect(mayManage(held, ['files.read'])).toBe(true);
    expect(mayManage(held, [])).toBe(true);
    expect(mayManage(held, ['files.read', 'power'])).toBe(false);
  });

  it('names what lies beyond the caller’s permissions', () => {
    const held = new Set(['files.read', 'users'] as const);
    expect(beyond(held, new Set(['power', 'files.read', 'console.read'] as const))).toEqual([
      'console.read',
      'power',
    ]);
  });

  it('compares sets', () => {
    expect(samePermissions(new Set<Permission>(['power']), new Set<Permission>(['power']))).toBe(
      true,
    );
    expect(samePermissions(new Set<Permission>(['power']), new Set<Permission>(['users']))).toBe(
      false,
    );
  });
});
