import { afterAll } from "vitest";
import { cleanup, openTestStore } from "../store/redis-helpers.js";
import { describeShardedService } from "./sharded-cases.js";

describeShardedService("redis", () => openTestStore(3));

afterAll(cleanup);
