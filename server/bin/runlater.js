#!/usr/bin/env node
// The runlater CLI. Runs the TypeScript sources through tsx's loader, so there is no
// build step between a checkout and a running server.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
await main(process.argv);
