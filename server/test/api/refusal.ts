/** What an API call that must fail was refused with: its code, the ErrorInfo field it names, and its message. */
import { ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "@runlater/sdk/gen/errors_pb.js";

export async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: e.code, field: e.findDetails(ErrorInfoSchema)[0]?.field, message: e.rawMessage };
  }
  throw new Error("not refused");
}
