/** The diamond under faults on the SQLite store (the default): the server SIGKILLed twice and restarted on the same file and port. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { diamondFaultSuite, restartedServer } from "./faults.js";

const dir = mkdtempSync(join(tmpdir(), "runlater-wf-faults-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

diamondFaultSuite("sqlite", () => restartedServer(`sqlite:${join(dir, "runlater.db")}`));
