import { afterAll } from "vitest";
import { cleanup, openTestStore } from "../store/redis-helpers.js";
import { describeScheduleService } from "./schedule-cases.js";

describeScheduleService("redis", () => openTestStore(1));

afterAll(cleanup);
