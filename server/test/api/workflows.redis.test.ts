import { afterAll } from "vitest";
import { cleanup, openTestStore } from "../store/redis-helpers.js";
import { describeWorkflowService } from "./workflow-cases.js";

describeWorkflowService("redis", () => openTestStore(1));

afterAll(cleanup);
