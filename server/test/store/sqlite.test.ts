import { afterAll } from "vitest";
import type { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { exerciseScheduleStore, exerciseStore, exerciseWorkflowStore } from "../storetest/index.js";
import { SqliteFiles } from "./sqlite-harness.js";

// One store, on one new file, for the whole suite: its tests use a fresh queue each (as on
// MySQL, where they share a database). A file has one owner, and each store is a thread.
const files = new SqliteFiles();
let store: Promise<SqliteStore> | undefined;
afterAll(() => files.dispose());

const open = () => (store ??= files.open());
exerciseStore("sqlite", open);
exerciseWorkflowStore("sqlite", open);
exerciseScheduleStore("sqlite", open);
