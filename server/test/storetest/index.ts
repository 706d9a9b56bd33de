/**
 * THE store suite: every store runs it unchanged through a ~20-line entry test
 * (server/test/store/<store>.test.ts). Changing a store means extending this suite.
 */
import { describe } from "vitest";
import type { Store } from "../../src/store/store.js";
import { exerciseJobAck } from "./job-ack.js";
import { exerciseJobBulk } from "./job-bulk.js";
import { exerciseJobCheckpoint } from "./job-checkpoint.js";
import { exerciseJobClaim } from "./job-claim.js";
import { exerciseJobExpire } from "./job-expire.js";
import { exerciseJobInsert } from "./job-insert.js";
import { exerciseJobLookup } from "./job-lookup.js";
import { exerciseJobOrdering } from "./job-ordering.js";
import { exerciseLease } from "./lease.js";
import { exerciseQueue } from "./queue.js";
import { exerciseRegistry } from "./registry.js";
import { exerciseSchedules } from "./schedules.js";
import { exercisePlacementOnShards } from "./sharded-placement.js";
import { exerciseScheduleNamesOnShards } from "./sharded-schedule-names.js";
import { exerciseTokens } from "./tokens.js";
import { exerciseWorkflows } from "./workflows.js";

export type OpenStore = () => Promise<Store>;

/**
 * The workflow cases (Store.workflows) for the stores that keep workflows; each store's
 * entry test calls it beside exerciseStore once it offers them (docs/workflows.md).
 */
export function exerciseWorkflowStore(name: string, open: OpenStore): void {
  describe(`workflow store suite: ${name}`, () => exerciseWorkflows(open));
}

/**
 * The schedule cases (Store.schedules) for the stores that keep schedules; each store's
 * entry test calls it beside exerciseWorkflowStore once it offers them (docs/workflows.md#schedules).
 */
export function exerciseScheduleStore(name: string, open: OpenStore): void {
  describe(`schedule store suite: ${name}`, () => exerciseSchedules(open));
}

/**
 * Stores opened with 3 shards: the workflow and schedule suites, the placement of
 * instances and schedules across the shards, and one schedule per name across them
 * (docs/workflows.md#stores-of-several-shards).
 */
export function exerciseWorkflowsOnShards(name: string, open: OpenStore): void {
  exerciseWorkflowStore(name, open);
  exerciseScheduleStore(name, open);
  describe(`placement suite: ${name}`, () => {
    exercisePlacementOnShards(open);
    exerciseScheduleNamesOnShards(open);
  });
}

export function exerciseStore(name: string, open: OpenStore): void {
  describe(`store suite: ${name}`, () => {
    exerciseQueue(open);
    exerciseJobInsert(open);
    exerciseJobClaim(open);
    exerciseLease(open);
    exerciseJobAck(open);
    exerciseJobCheckpoint(open);
    exerciseJobExpire(open);
    exerciseJobLookup(open);
    exerciseJobBulk(open);
    exerciseJobOrdering(open);
    exerciseRegistry(open);
    exerciseTokens(open);
  });
}
