import { afterAll } from "vitest";
import { exerciseStore } from "../storetest/index.js";
import { SqliteFiles } from "./sqlite-harness.js";

// Each open() is a store on its own new file (one process owns a file, so stores cannot share one).
const files = new SqliteFiles();
afterAll(() => files.dispose());

exerciseStore("sqlite", () => files.open());
