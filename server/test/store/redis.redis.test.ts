import { afterAll } from "vitest";
import {
  exerciseScheduleStore,
  exerciseStore,
  exerciseWorkflowStore,
  exerciseWorkflowsOnShards,
} from "../storetest/index.js";
import { cleanup, openTestStore } from "./redis-helpers.js";

exerciseStore("redis", () => openTestStore(1));
// The same suite over three shards (three databases): the shard map, per-shard batches
// and the global claim sweep.
exerciseStore("redis, 3 shards", () => openTestStore(3));
exerciseWorkflowStore("redis", () => openTestStore(1));
exerciseScheduleStore("redis", () => openTestStore(1));
exerciseWorkflowsOnShards("redis, 3 shards", () => openTestStore(3));

afterAll(cleanup);
