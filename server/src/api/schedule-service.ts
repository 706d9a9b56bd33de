/** runlater.v1.ScheduleService: parse, call the engine's schedules, map (docs/workflows.md#schedules). */
import type { ConnectRouter } from "@connectrpc/connect";
import { ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { invalidArgument } from "../domain/errors.js";
import { limits } from "../domain/limits.js";
import { upcomingFires } from "../domain/schedule.js";
import type { Engine } from "../engine/engine.js";
import { scheduleFromProto, scheduleToProto } from "../wire/schedule.js";

export function registerScheduleService(router: ConnectRouter, engine: Engine): ConnectRouter {
  const schedules = engine.schedules;
  return router.service(ScheduleService, {
    async createSchedule(req) {
      const { schedule, created } = await schedules.create(scheduleFromProto(req.schedule), req.paused);
      return { schedule: scheduleToProto(schedule, upcomingFires(schedule, 1)), created };
    },
    async updateSchedule(req) {
      const schedule = await schedules.update(scheduleFromProto(req.schedule));
      return { schedule: scheduleToProto(schedule, upcomingFires(schedule, 1)) };
    },
    async deleteSchedule(req) {
      return { deleted: await schedules.delete(req.name) };
    },
    async getSchedule(req) {
      if (req.upcoming > limits.scheduleUpcomingMax)
        throw invalidArgument("upcoming", `upcoming is at most ${limits.scheduleUpcomingMax}`);
      const schedule = await schedules.get(req.name);
      return {
        schedule: scheduleToProto(schedule, upcomingFires(schedule, req.upcoming || limits.scheduleUpcomingDefault)),
      };
    },
    async listSchedules(req) {
      if (req.limit > limits.scanLimitMax) throw invalidArgument("limit", `limit is at most ${limits.scanLimitMax}`);
      const limit = req.limit || limits.scanLimitDefault;
      const after = req.pageToken === "" ? undefined : decodeToken(req.pageToken);
      const page = await schedules.list({ limit: limit + 1, after });
      const shown = page.slice(0, limit);
      const last = shown[shown.length - 1];
      return {
        schedules: shown.map((s) => scheduleToProto(s)),
        nextPageToken: page.length > limit && last ? Buffer.from(last.name).toString("base64url") : "",
      };
    },
    async pauseSchedule(req) {
      const schedule = await schedules.pause(req.name);
      return { schedule: scheduleToProto(schedule) };
    },
    async resumeSchedule(req) {
      const schedule = await schedules.resume(req.name);
      return { schedule: scheduleToProto(schedule, upcomingFires(schedule, 1)) };
    },
  });
}

function decodeToken(token: string): string {
  const name = Buffer.from(token, "base64url").toString("utf8");
  if (name === "" || Buffer.from(name).toString("base64url") !== token)
    throw invalidArgument("page_token", "page_token is not one this server issued: pass next_page_token unchanged");
  return name;
}
