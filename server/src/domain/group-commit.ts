/**
 * Group commit: while one write of a line is in flight, the calls for that line that
 * arrive meanwhile wait, and when it ends they go to the store together, as one write. No
 * timer: a call that finds no write in flight is written at once, so a lone call waits for
 * nothing, and the groups grow only as fast as the calls outpace the store (on Redis, one
 * script call and one round trip for a group instead of one per call).
 *
 * A write answers each of its calls on its own (a value, or an Error for that call alone);
 * a write that fails as a whole fails every call of its group. Lines are keyed (Enqueue
 * groups its calls by queue); a line's entry goes when it empties, so keys a client makes
 * up cost nothing once their calls are answered.
 */

interface WaitingCall<In, Out> {
  input: In;
  resolve(value: Out): void;
  reject(err: unknown): void;
}

export interface GroupCommitOptions<In, Out> {
  /** Writes a group, answering each call in order: its value, or an Error for it alone. */
  write(inputs: In[]): Promise<Array<Out | Error>>;
  /** At most this many calls per write. */
  maxCalls: number;
  /** At most this much weight per write (a call heavier than that goes alone). */
  maxWeight?: number;
  weigh?(input: In): number;
}

export class GroupCommit<In, Out> {
  /**
   * Lines with a write in flight, and the calls waiting for it to end. A plain object, not
   * a Map: an entry comes and goes with every write (arrival-list.ts says why a Map that
   * churns costs the garbage collector).
   */
  private readonly lines: Record<string, Array<WaitingCall<In, Out>>> = Object.create(null);

  constructor(private readonly o: GroupCommitOptions<In, Out>) {}

  /** Writes `input` with the other calls of line `key` that wait when it is its turn. */
  submit(key: string, input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      const call = { input, resolve, reject };
      const waiting = this.lines[key];
      if (waiting) waiting.push(call);
      else {
        this.lines[key] = [];
        this.write(key, [call]);
      }
    });
  }

  private write(key: string, group: Array<WaitingCall<In, Out>>): void {
    let written: Promise<Array<Out | Error>>;
    try {
      written = this.o.write(group.map((c) => c.input));
    } catch (err) {
      written = Promise.reject(err);
    }
    written.then(
      (answers) => {
        group.forEach((call, i) => {
          const answer = answers[i];
          if (answer instanceof Error) call.reject(answer);
          else call.resolve(answer as Out);
        });
        this.next(key);
      },
      (err: unknown) => {
        for (const call of group) call.reject(err);
        this.next(key);
      },
    );
  }

  /** The write of line `key` ended: the calls that waited for it go as the next group. */
  private next(key: string): void {
    const waiting = this.lines[key]!;
    if (waiting.length === 0) {
      delete this.lines[key];
      return;
    }
    const { maxCalls, maxWeight = Number.POSITIVE_INFINITY, weigh } = this.o;
    let weight = 0;
    let take = 0;
    while (take < waiting.length && take < maxCalls) {
      const w = weigh ? weigh(waiting[take]!.input) : 0;
      if (take > 0 && weight + w > maxWeight) break;
      weight += w;
      take++;
    }
    this.write(key, waiting.splice(0, take));
  }
}
