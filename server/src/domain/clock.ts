/**
 * Time is injected everywhere (engine, broker, maintenance) so tests can drive claim
 * timeouts, run_after and backoff without sleeping. All times are epoch milliseconds.
 */
export interface Clock {
  now(): number;
  /** Runs `fn` once `ms` have passed on this clock. Returns a function that cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

/**
 * Node's timers hold at most 2^31 − 1 ms (~24.8 days); a longer delay fires after 1 ms
 * (with a TimeoutOverflowWarning). A job due in a month would then wake the broker every
 * millisecond. Longer delays are waited in steps of at most this, so a timer never fires early.
 */
export const TIMER_STEP_MAX_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const due = Date.now() + Math.max(0, ms);
    let handle: NodeJS.Timeout;
    const arm = () => {
      const left = due - Date.now();
      handle = setTimeout(left > TIMER_STEP_MAX_MS ? arm : fn, Math.min(Math.max(0, left), TIMER_STEP_MAX_MS));
      handle.unref?.();
    };
    arm();
    return () => clearTimeout(handle);
  },
};

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to; timers fire, in time order, inside advance().
 * A timer set outside advance() for a time already reached fires at once (on the next
 * turn of the event loop), as a real clock's would: work that outlives advance()'s
 * settle rounds (a refill on a networked store, which then arms the next due timer)
 * must not wait for the next advance to find its timer already due.
 */
export class ManualClock implements Clock {
  private current: number;
  private timers: ManualTimer[] = [];
  private seq = 0;
  private advancing = false;

  constructor(start = Date.UTC(2030, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): () => void {
    // Whole milliseconds: a fractional delay (a lease renewal every ttl / 3) would leave the
    // clock at a fractional time while the timer runs, and a job written then (a worker's
    // ack arriving during an advance) would carry a time a Timestamp cannot encode.
    const timer = { at: this.current + Math.max(0, Math.ceil(ms)), seq: this.seq++, fn };
    if (!this.advancing && timer.at <= this.current) {
      const immediate = setImmediate(fn);
      return () => clearImmediate(immediate);
    }
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward, firing due timers in order, and lets their async work settle. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    this.advancing = true;
    try {
      for (;;) {
        const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
        if (!due) break;
        this.timers = this.timers.filter((t) => t !== due);
        this.current = Math.max(this.current, due.at);
        due.fn();
        await settle();
      }
      this.current = target;
    } finally {
      this.advancing = false;
    }
    await settle();
  }
}

/** Lets pending promise callbacks and immediates run. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}
