/**
 * The one deadline of a short call to an engine (src/host/runtime/docker/engine.ts), which the
 * node's volumes, helper containers and helper image share: a call that does not settle in time
 * fails with its caller's own error, in words; one that settles is passed through, answer or
 * failure, and leaves no timer behind.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineDeadline } from '../src/host/runtime/docker/engine.js';

class VolumeFailure extends Error {}
class HelperFailure extends Error {}

const never = new Promise<never>(() => undefined);

describe('engineDeadline', () => {
  it("fails a call that does not settle with its caller's error, saying what was not done", async () => {
    const volumes = engineDeadline((message) => new VolumeFailure(message));
    const helpers = engineDeadline((message) => new HelperFailure(message));
    await assert.rejects(volumes(never, 'make the volume', 20), (error: unknown) => {
      assert.ok(error instanceof VolumeFailure);
      assert.equal(error.message, 'the engine did not make the volume in time');
      return true;
    });
    await assert.rejects(helpers(never, 'answer', 20), (error: unknown) => {
      assert.ok(error instanceof HelperFailure);
      assert.equal(error.message, 'the engine did not answer in time');
      return true;
    });
  });

  it("passes a call's answer and its own failure through, untouched", async () => {
    const deadline = engineDeadline((message) => new VolumeFailure(message));
    assert.equal(await deadline(Promise.resolve(42), 'answer'), 42);
    const refused = Object.assign(new Error('no such volume'), { statusCode: 404 });
    await assert.rejects(deadline(Promise.reject(refused), 'answer'), (error: unknown) => {
      assert.equal(error, refused);
      return true;
    });
  });

  it('leaves no timer running once the call settled', async () => {
    const deadline = engineDeadline((message) => new VolumeFailure(message));
    const before = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    await deadline(Promise.resolve('done'), 'answer', 60_000);
    const after = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    assert.equal(after, before);
  });
});
