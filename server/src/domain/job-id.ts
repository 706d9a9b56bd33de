/**
 * Job ids name where a job lives, as PinLater's descriptors did, so ack, checkpoint and
 * lookup go straight to it: `<queue>.<partition>.<unique>`. The unique part is a
 * timestamp, a per-process random node tag and a counter, so ids never repeat across
 * restarts or nodes (PinLater's AUTO_INCREMENT reuse is impossible here).
 */
import { randomBytes, randomFillSync } from "node:crypto";
import { limits } from "./limits.js";

const node = randomBytes(3).toString("hex");
let counter = 0;

export function newJobId(queue: string, partition: number, now: number): string {
  counter = (counter + 1) % 0x1000000;
  if (now !== lastNow) {
    // An enqueue batch shares one `now`: its base-36 form is made once, not once per job.
    lastNow = now;
    lastNowText = now.toString(36);
  }
  return `${queue}.${partition}.${lastNowText}${node}${counter.toString(36).padStart(5, "0")}`;
}

let lastNow = Number.NaN;
let lastNowText = "";

export interface ParsedJobId {
  queue: string;
  partition: number;
}

/** Returns undefined for a string that is not a runlater job id. */
export function parseJobId(id: string): ParsedJobId | undefined {
  const match = /^([A-Za-z0-9_]{1,64})\.(\d{1,3})\.[0-9a-z]{8,40}$/.exec(id);
  if (!match) return undefined;
  return { queue: match[1]!, partition: Number(match[2]) };
}

/**
 * Whether a claim token sent back by a worker has the shape of one a server issues:
 * printable ASCII (MySQL's column refuses to compare anything else) that fits the stores'
 * fixed-width slot. Any other is stale without asking the store.
 */
export function couldBeClaimToken(token: string): boolean {
  return token.length <= limits.claimTokenMaxBytes && /^[\x21-\x7e]*$/.test(token);
}

/**
 * An unguessable claim token (16 characters). One hand-out batch shares one token: an ACK
 * names the job and the token, so (job id, token) still identifies one attempt, and a
 * shared value lets the stores write a whole batch's claim with one set of values.
 */
export function newClaimToken(): string {
  if (tokenPoolAt === tokenPool.length) {
    randomFillSync(tokenPool);
    tokenPoolAt = 0;
  }
  tokenPoolAt += TOKEN_BYTES;
  return tokenPool.toString("base64url", tokenPoolAt - TOKEN_BYTES, tokenPoolAt);
}

// Random bytes are drawn for 256 tokens at a time: one call to the generator per hand-out
// showed in the server's profile (its cost is per call, not per byte).
const TOKEN_BYTES = 12;
const tokenPool = Buffer.alloc(TOKEN_BYTES * 256);
let tokenPoolAt = tokenPool.length;
