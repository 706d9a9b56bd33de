/**
 * Keeps the claims of held jobs alive while their handlers run (PinLater's heartbeat).
 * A claim is renewed once half its lifetime has passed, with a Checkpoint carrying only
 * job_id and claim_token (which renews for the queue's claim timeout).
 *
 * One timer for all claims, and one batched Checkpoint for every claim due at that
 * moment (claims due within the next quarter of their lifetime ride along), so many
 * long jobs cost one call per round, not one call and one timer per job.
 *
 * Two clocks. The server's expiries are wall-clock times: the worker's `clock` (Date.now
 * unless the Worker was given another) turns each into a lifetime once, when it arrives
 * (expiry minus clock()). From then on everything is scheduled on the monotonic clock
 * (performance.now), so a wall clock that jumps, or one that stands still (a test on the
 * server's manual clock), never delays a renewal: each comes half a lifetime after the
 * last. Worker and server wall clocks are assumed in sync (NTP), as with any lease, and
 * renewing at half-life leaves the other half as margin.
 */

import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { Outcome, type WorkerService } from "../gen/runlater/v1/worker_service_pb.js";
import { SlotTable } from "../slot-table.js";
import { timerDelay } from "./timer-delay.js";
import type { WorkerErrorHandler } from "./types.js";

export interface ClaimKeeperOptions {
  queue: string;
  worker: Client<typeof WorkerService>;
  /** The wall clock (epoch ms) the server's expiries are read against. */
  clock: () => number;
  onError: WorkerErrorHandler;
  /** Called when the server says the claim is gone (it expired and was handed out again, or the job was deleted). */
  onLost: (jobId: string) => void;
}

/** A claim being kept: track() gives it, untrack() takes it back. */
export interface KeptClaim {
  readonly jobId: string;
}

interface Claim extends KeptClaim {
  /** Where the table keeps it. */
  slot: number;
  claimToken: string;
  /** When the claim expires, on the monotonic clock. */
  expiresAt: number;
  /** When to renew it (halfway to expiry), on the monotonic clock. */
  renewAt: number;
  renewing: boolean;
}

/** Renewing more often than this buys nothing and floods the server. */
const MIN_RENEW_DELAY_MS = 10;

const monotonic = () => performance.now();

export class ClaimKeeper {
  private readonly claims = new SlotTable<Claim>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly o: ClaimKeeperOptions) {}

  /** `expiresAt` is the server's claim_expires_at (epoch ms), read when the job arrived. */
  track(jobId: string, claimToken: string, expiresAt: number): KeptClaim {
    const now = monotonic();
    const claim: Claim = { jobId, claimToken, slot: 0, expiresAt: 0, renewAt: 0, renewing: false };
    this.lifetimeFrom(claim, now, expiresAt - this.o.clock());
    claim.slot = this.claims.add(claim);
    this.arm(claim.renewAt);
    return claim;
  }

  /** Stops keeping `claim` (its job ended or went back); one already lost or untracked is ignored. */
  untrack(claim: KeptClaim): void {
    this.claims.remove((claim as Claim).slot, claim as Claim);
    if (this.claims.size === 0) this.disarm();
  }

  close(): void {
    this.claims.clear();
    this.disarm();
  }

  /** Sets the claim's expiry `lifetime` ms after `now` (monotonic) and its renewal halfway there. */
  private lifetimeFrom(claim: Claim, now: number, lifetime: number): void {
    claim.expiresAt = now + lifetime;
    claim.renewAt = now + Math.max(MIN_RENEW_DELAY_MS, lifetime / 2);
  }

  private arm(at: number): void {
    if (at >= this.timerAt) return;
    this.disarm();
    this.timerAt = at;
    this.timer = setTimeout(() => void this.renewDue(), timerDelay(Math.max(MIN_RENEW_DELAY_MS, at - monotonic())));
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private rearm(): void {
    let next = Number.POSITIVE_INFINITY;
    for (const c of this.claims.values()) if (!c.renewing && c.renewAt < next) next = c.renewAt;
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }

  private async renewDue(): Promise<void> {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = monotonic();
    // Due now, or within the next quarter of its lifetime: renew those together.
    const due = this.claims.values().filter((c) => !c.renewing && c.renewAt <= now + (c.expiresAt - c.renewAt) / 2);
    for (const c of due) c.renewing = true;
    this.rearm();
    if (due.length === 0) return;
    const sentAt = monotonic();
    try {
      const res = await this.o.worker.checkpoint({
        queue: this.o.queue,
        checkpoints: due.map((c) => ({ jobId: c.jobId, claimToken: c.claimToken })),
      });
      const answeredAt = monotonic();
      const wallNow = this.o.clock();
      due.forEach((claim, i) => {
        claim.renewing = false;
        if (this.claims.get(claim.slot) !== claim) return; // finished meanwhile
        const result = res.results[i];
        if (result?.outcome === Outcome.ACKNOWLEDGED) {
          if (result.claimExpiresAt) this.lifetimeFrom(claim, answeredAt, timestampMs(result.claimExpiresAt) - wallNow);
          // No expiry in the answer: renewed for the same lifetime, counted from the request.
          else this.lifetimeFrom(claim, sentAt, (claim.expiresAt - claim.renewAt) * 2);
          return;
        }
        this.claims.remove(claim.slot, claim);
        this.o.onError(
          new Error(
            `claim on job ${claim.jobId} lost: ${result === undefined ? "no outcome" : Outcome[result.outcome]}`,
          ),
          { op: "checkpoint", jobId: claim.jobId },
        );
        this.o.onLost(claim.jobId);
      });
    } catch (err) {
      this.o.onError(err, { op: "checkpoint" });
      // Try again soon, well before the expiry if there is time left; if the claim has
      // already run out, the server's answer to the next try will say whether it is lost.
      const failedAt = monotonic();
      for (const claim of due) {
        claim.renewing = false;
        const left = claim.expiresAt - failedAt;
        claim.renewAt = failedAt + (left > 0 ? left / 4 : 500);
      }
    }
    this.rearm();
  }
}
