// Entry of the SQLite store's worker thread (channel.ts). A worker does not inherit the
// TypeScript loader the server's own thread registered (bin/runlater.js), so it registers
// tsx's (importing tsx/esm does) before it loads worker.ts. workerData.start is what
// worker.ts reads.
import "tsx/esm";
import { workerData } from "node:worker_threads";

await import(workerData.entry);
