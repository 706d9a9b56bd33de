/** Machine output for --json: proto3 JSON of the response messages, one document per command. */
import { type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import type { CliIo } from "./io.js";

export function printJson<Desc extends DescMessage>(io: CliIo, schema: Desc, message: MessageShape<Desc>): void {
  // Zero values are written too, so scripts can read `paused: false` instead of guessing.
  io.out(`${JSON.stringify(toJson(schema, message, { alwaysEmitImplicit: true }), null, 2)}\n`);
}
