// Entry of the SQLite store's worker thread (channel.ts). workerData.entry is worker.js
// when the server runs built (server/dist), or worker.ts when it runs from source (the
// tests): a worker does not inherit the TypeScript loader of the thread that made it, so
// then it registers tsx's first (importing tsx/esm does). workerData.start is what the
// worker module reads.
import { workerData } from "node:worker_threads";

if (workerData.entry.endsWith(".ts")) await import("tsx/esm");
await import(workerData.entry);
