/**
 * The order a session works in. Requests are answered as they finish, at most `maxInFlight`
 * at once (`Slots`); those on one handle keep the order they came in (`HandleOrder`), as the
 * SFTP draft requires of requests on the same file, except that reads run side by side: they
 * change nothing, and a client reading ahead (OpenSSH asks for 64 blocks at once) should not
 * wait for each one in turn when the files are on another machine.
 */

/** A FIFO queue of work, `shared` work running side by side, the rest alone. */
export class HandleOrder {
  #running = 0;
  #exclusive = false;
  readonly #waiting: { readonly shared: boolean; readonly start: () => void }[] = [];

  run<T>(shared: boolean, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        this.#running++;
        if (!shared) this.#exclusive = true;
        work()
          .then(resolve, reject)
          .finally(() => {
            this.#running--;
            if (!shared) this.#exclusive = false;
            this.#next();
          });
      };
      if (this.#waiting.length === 0 && this.#free(shared)) start();
      else this.#waiting.push({ shared, start });
    });
  }

  #free(shared: boolean): boolean {
    return shared ? !this.#exclusive : this.#running === 0;
  }

  #next(): void {
    for (let head = this.#waiting[0]; head !== undefined; head = this.#waiting[0]) {
      if (!this.#free(head.shared)) return;
      this.#waiting.shift();
      head.start();
    }
  }
}

/** At most `max` pieces of work at once, the others started in the order they came. */
export class Slots {
  readonly #max: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(max: number) {
    this.#max = Math.max(1, max);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#max) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      // The slot passes straight to the next in line.
      if (next === undefined) this.#running--;
      else next();
    }
  }
}
