/**
 * One name, one schedule, on a store of several shards (Redis, MySQL:
 * docs/workflows.md#stores-of-several-shards). A schedule lives on the shard of what it
 * starts (instance-placement.ts), so two creates of one name can land on two shards; no
 * single atomic step reaches both. Names are therefore claimed in a registry on shard 0,
 * one claim per name (the shard its schedule goes on, and a token naming the create that
 * claimed it), in one atomic step that also holds the quota (the count of claims), and
 * only then is the schedule inserted on its shard.
 *
 * A claim without its schedule is a create between its two steps, or one that crashed
 * there. Another create takes it over only after *fencing* it on the claim's shard: one
 * atomic step there that answers "exists" if the schedule is there (the name is taken),
 * else records the claim's token as fenced, so that claim's insert, which checks for its
 * token in the same step, can never happen. Hence:
 *
 * - every schedule inserted keeps its claim until it is deleted (a fence finds it), so
 *   there are never more schedules than claims: the quota holds;
 * - a claim is replaced only once its own insert can no longer happen, so one name never
 *   has two schedules, on one shard or two;
 * - a crash between the steps blocks nothing: the next create of the name takes the claim
 *   over. Until then it holds a place in the quota (and its fence, if one is written, a
 *   few bytes on its shard).
 *
 * A delete removes the schedule, then its claim (only the claim it read before: one taken
 * over meanwhile is another create's). Stores of one shard skip all of this: their insert
 * checks the name and the quota in its own single step.
 */
import { randomBytes } from "node:crypto";
import { RunlaterError } from "../domain/errors.js";
import type { Schedule } from "../domain/schedule.js";

/** A name's claim in the registry: the shard its schedule goes on, and the create that claimed it. */
export interface NameClaim {
  shard: number;
  token: string;
}

/** What a store gives the protocol: atomic steps, each on one shard. */
export interface ScheduleNameSteps {
  /** Shard 0: the name's claim, if any. */
  claimOf(name: string): Promise<NameClaim | undefined>;
  /**
   * Shard 0, in one step: sets the name's claim to `next` (undefined: removes it) if it is
   * `expected` now (undefined: there is none, and then only while fewer than `max` claims
   * exist: "full" otherwise). Else "changed", with the claim now held (undefined: none).
   */
  claimSwap(p: {
    name: string;
    expected?: NameClaim;
    next?: NameClaim;
    max: number;
  }): Promise<"done" | "full" | { changed: NameClaim | undefined }>;
  /**
   * Shard `shard`, in one step: "exists" when the schedule `name` is there; otherwise
   * records `token` as fenced (its insert will be refused) and answers "fenced".
   */
  fence(shard: number, name: string, token: string): Promise<"exists" | "fenced">;
  /**
   * Shard `shard`, in one step: inserts `schedule` under a claim's `token`, unless one of
   * its name is there ("exists") or the token was fenced ("fenced", the fence then
   * removed: a token is used by one insert only). No quota here: the claims hold it.
   */
  insert(shard: number, schedule: Schedule, token: string): Promise<"inserted" | "exists" | "fenced">;
}

/**
 * How often a create claims again after the claim it saw changed under it (another create
 * took it first). Each loss means another create made progress, so a few suffice.
 */
const CLAIM_TRIES = 10;

export class ScheduleNames {
  constructor(readonly steps: ScheduleNameSteps) {}

  /** Claims the schedule's name for shard `shard` (while fewer than `max` are claimed) and inserts it there; see the file's comment. */
  async insert(schedule: Schedule, shard: number, max: number): Promise<"inserted" | "exists" | "full"> {
    const name = schedule.name;
    const mine = { shard, token: randomBytes(16).toString("hex") };
    let expected: NameClaim | undefined;
    for (let tries = 0; tries < CLAIM_TRIES; tries++) {
      const swapped = await this.steps.claimSwap({ name, expected, next: mine, max });
      if (swapped === "full") return "full";
      if (swapped === "done") {
        // Fenced: another create took the name over between the two steps; it is theirs.
        return (await this.steps.insert(shard, schedule, mine.token)) === "inserted" ? "inserted" : "exists";
      }
      expected = swapped.changed;
      if (expected && (await this.steps.fence(expected.shard, name, expected.token)) === "exists") return "exists";
    }
    throw new RunlaterError(
      "unavailable",
      "CONFLICT",
      `schedule ${name}: other creates of this name kept claiming it first; retry`,
      "name",
    );
  }

  /**
   * Deletes schedule `name` from shard `shard` (`remove`), then frees its claim. The claim
   * is read first: while the schedule exists no create can take it over, so the claim read
   * is the schedule's, and one taken over after the delete is left to its new create.
   */
  async delete(name: string, shard: number, remove: () => Promise<boolean>): Promise<boolean> {
    const held = await this.steps.claimOf(name);
    const removed = await remove();
    if (removed && held?.shard === shard) await this.steps.claimSwap({ name, expected: held, max: 0 });
    return removed;
  }
}
