/**
 * Keeps the claims of held jobs alive while their handlers run (PinLater's heartbeat).
 * A claim is renewed once half the time to its expiry has passed, with a Checkpoint
 * carrying only job_id and claim_token (which renews for the queue's claim timeout).
 *
 * CheckpointResponse does not say the new expiry, so it is estimated: the claim timeout
 * is taken as claim_expires_at minus the local time the Dequeue answer arrived (never
 * more than the real timeout, so renewals come early rather than late), and a renewal
 * sent at time t is assumed to hold until t + that timeout. Clock skew between worker
 * and server shifts the first estimate; keep clocks in sync (NTP) as for any lease.
 */
import type { Client } from "@connectrpc/connect";
import { Outcome, type WorkerService } from "../gen/runlater/v1/worker_service_pb.js";
import type { WorkerErrorHandler } from "./types.js";

export interface ClaimKeeperOptions {
  queue: string;
  worker: Client<typeof WorkerService>;
  onError: WorkerErrorHandler;
  /** Called when the server says the claim is gone (it expired and was handed out again, or the job was deleted). */
  onLost: (jobId: string) => void;
}

interface Claim {
  jobId: string;
  claimToken: string;
  timeoutMs: number;
  expiresAt: number;
  timer: NodeJS.Timeout | undefined;
}

/** Renewing more often than this buys nothing and floods the server. */
const MIN_RENEW_DELAY_MS = 10;

export class ClaimKeeper {
  private readonly claims = new Map<string, Claim>();

  constructor(private readonly o: ClaimKeeperOptions) {}

  track(jobId: string, claimToken: string, expiresAt: number, receivedAt: number): void {
    this.untrack(jobId);
    const claim: Claim = { jobId, claimToken, expiresAt, timeoutMs: Math.max(expiresAt - receivedAt, 2 * MIN_RENEW_DELAY_MS), timer: undefined };
    this.claims.set(jobId, claim);
    this.schedule(claim, (expiresAt - Date.now()) / 2);
  }

  untrack(jobId: string): void {
    const claim = this.claims.get(jobId);
    if (!claim) return;
    clearTimeout(claim.timer);
    this.claims.delete(jobId);
  }

  close(): void {
    for (const id of [...this.claims.keys()]) this.untrack(id);
  }

  private schedule(claim: Claim, delayMs: number): void {
    claim.timer = setTimeout(() => void this.renew(claim), Math.max(MIN_RENEW_DELAY_MS, delayMs));
  }

  private async renew(claim: Claim): Promise<void> {
    const sentAt = Date.now();
    try {
      const res = await this.o.worker.checkpoint({ queue: this.o.queue, checkpoints: [{ jobId: claim.jobId, claimToken: claim.claimToken }] });
      if (this.claims.get(claim.jobId) !== claim) return; // finished meanwhile
      const outcome = res.results[0]?.outcome;
      if (outcome === Outcome.ACKNOWLEDGED) {
        claim.expiresAt = sentAt + claim.timeoutMs;
        this.schedule(claim, (claim.expiresAt - Date.now()) / 2);
        return;
      }
      this.untrack(claim.jobId);
      this.o.onError(new Error(`claim on job ${claim.jobId} lost: ${outcome === undefined ? "no outcome" : Outcome[outcome]}`), { op: "checkpoint", jobId: claim.jobId });
      this.o.onLost(claim.jobId);
    } catch (err) {
      if (this.claims.get(claim.jobId) !== claim) return;
      this.o.onError(err, { op: "checkpoint", jobId: claim.jobId });
      // Try again soon, well before the expiry if there is time left; if the claim has
      // already run out, the server's answer to the next try will say whether it is lost.
      const left = claim.expiresAt - Date.now();
      this.schedule(claim, left > 0 ? left / 4 : 500);
    }
  }
}
