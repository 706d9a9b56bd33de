/** `runlater token create|list|revoke|generate`: API tokens (TokenService, docs/security.md). */
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  CreateTokenResponseSchema,
  ListTokensResponseSchema,
  RevokeTokenResponseSchema,
} from "@runlater/sdk/gen/token_service_pb.js";
import type { Command } from "commander";
import { newToken } from "../domain/tokens.js";
import { addJsonOption, clientContext } from "./client.js";
import type { CliIo } from "./io.js";
import { printJson } from "./json.js";
import { formatTime, table } from "./output.js";
import { parseDurationMs } from "./parse.js";

type JsonFlag = { json?: boolean };
const collect = (value: string, previous: string[]) => [...previous, value];

export function registerToken(program: Command, io: CliIo): void {
  const token = program
    .command("token")
    .description("API tokens: what a caller may do, on which queues (needs an admin token in RUNLATER_TOKEN)");

  addJsonOption(
    token
      .command("create")
      .description("make a token and print it once (only a hash of it is kept)")
      .argument("<name>", "what it is for")
      .requiredOption("--scope <scope>", "enqueue, work, read or admin (repeat for several)", collect, [])
      .option(
        "--queue <pattern>",
        "limit it to queues matching the pattern (`*` any run of name characters; repeat)",
        collect,
        [],
      )
      .option("--expires-in <duration>", "stop it working after this long (e.g. 30d, 12h)", parseDurationMs),
  )
    .addHelpText(
      "after",
      "\nExample:\n  $ runlater token create deploys --scope enqueue --queue 'emails*' --expires-in 90d",
    )
    .action(
      async (name: string, opts: { scope: string[]; queue: string[]; expiresIn?: number } & JsonFlag, cmd: Command) => {
        const ctx = clientContext(io, cmd);
        const res = await ctx.clients.tokens.createToken({
          name,
          scopes: opts.scope,
          queues: opts.queue,
          expiresAt: opts.expiresIn === undefined ? undefined : timestampFromMs(Date.now() + opts.expiresIn),
        });
        if (ctx.json) return printJson(io, CreateTokenResponseSchema, res);
        io.out(`${res.secretToken}\n`);
        io.err(
          `token ${res.token?.tokenId} "${name}" (${opts.scope.join(", ")}): keep it now, it is not shown again\n`,
        );
      },
    );

  addJsonOption(token.command("list").description("list tokens (never their secrets)"))
    .addHelpText("after", "\nExample (with an admin token in RUNLATER_TOKEN):\n  $ runlater token list")
    .action(async (_opts: JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.tokens.listTokens({});
      if (ctx.json) return printJson(io, ListTokensResponseSchema, res);
      if (res.tokens.length === 0) return io.out("no tokens\n");
      io.out(
        table(
          ["ID", "NAME", "SCOPES", "QUEUES", "EXPIRES"],
          res.tokens.map((t) => [
            t.tokenId,
            t.name,
            t.scopes.join(","),
            t.queues.join(",") || "*",
            t.expiresAt ? formatTime(t.expiresAt) : "never",
          ]),
        ),
      );
    });

  addJsonOption(
    token
      .command("revoke")
      .description("revoke a token: every node refuses it within a few seconds")
      .argument("<id>", "its id (runlater token list)"),
  )
    .addHelpText("after", "\nExample:\n  $ runlater token revoke 3f9c2a71b0de")
    .action(async (id: string, _opts: JsonFlag, cmd: Command) => {
      const ctx = clientContext(io, cmd);
      const res = await ctx.clients.tokens.revokeToken({ tokenId: id });
      if (ctx.json) return printJson(io, RevokeTokenResponseSchema, res);
      io.out(res.revoked ? `revoked ${id}\n` : `no token ${id}; nothing changed\n`);
    });

  token
    .command("generate")
    .description("print a new random token, without a server: give it to `serve` as the bootstrap admin token")
    .action(() => {
      io.out(
        `${newToken({ name: "generated", scopes: ["admin"], queues: [], now: Date.now(), expiresAt: 0 }).token}\n`,
      );
    });
}
