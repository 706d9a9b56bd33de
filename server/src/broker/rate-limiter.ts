/**
 * Token bucket for a queue's max_dequeue_per_second, charged per job actually handed
 * out (PinLater charged the requested limit). Burst is one second's worth (at least 1).
 * A rate of 0 means unlimited.
 *
 * Tokens accrue as fractions; refills at different moments add them up in floating
 * point, so 0.6665 + 0.3335 may come to 0.99999…: whole tokens are counted with a
 * tolerance far below any real fraction (1e-9 of a job).
 */
const EPSILON = 1e-9;

export class RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private rate: number,
    now: number,
  ) {
    this.tokens = Math.max(1, rate);
    this.last = now;
  }

  setRate(rate: number, now: number): void {
    this.refill(now);
    // From unlimited to a limit: start with a full second's worth, as a new queue does.
    this.tokens = this.rate <= 0 ? Math.max(1, rate) : Math.min(this.tokens, Math.max(1, rate));
    this.rate = rate;
  }

  /** Grants up to `wanted` jobs now. */
  take(wanted: number, now: number): number {
    if (this.rate <= 0) return wanted;
    this.refill(now);
    const granted = Math.min(wanted, Math.floor(this.tokens + EPSILON));
    this.tokens -= granted;
    return granted;
  }

  /** Gives back tokens for jobs granted but not handed out. */
  refund(count: number): void {
    if (this.rate > 0 && count > 0) this.tokens = Math.min(Math.max(1, this.rate), this.tokens + count);
  }

  /** Milliseconds until at least one job can be granted. */
  msUntilNext(now: number): number {
    if (this.rate <= 0) return 0;
    this.refill(now);
    return this.tokens + EPSILON >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.rate);
  }

  private refill(now: number): void {
    if (now > this.last) {
      this.tokens = Math.min(Math.max(1, this.rate), this.tokens + ((now - this.last) * this.rate) / 1000);
      this.last = now;
    }
  }
}
