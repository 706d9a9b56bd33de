import { afterAll } from "vitest";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { SqliteFiles } from "../store/sqlite-harness.js";
import { describeWorkflowService } from "./workflow-cases.js";

const files = new SqliteFiles();
afterAll(() => files.dispose());

describeWorkflowService("memory", async () => new MemoryStore());
// The default store of `runlater serve`: a new file (the server closes the store when it stops).
describeWorkflowService("sqlite", () => files.open());
