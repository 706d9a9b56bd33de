--[[
  Schedules (docs/workflows.md#schedules), under the workflow instances' hash tag {wf},
  each on the shard of what it starts (store/instance-placement.ts), so a fire's script
  finds the schedule and the instance or job it starts in one slot:
    <prefix>:{wf}:s:<name>           hash: rev, data (the schedule as workflow-codec.ts encodes it)
    <prefix>:{wf}:schedules          zset: every schedule's name, score 0 (listed by name,
                                     counted for the quota)
    <prefix>:{wf}:schedules:due      zset: schedules that have a next fire time, score
                                     next_fire_at, member the name (ties in name order)
    <prefix>:{wf}:schedule-fences    set: tokens of schedule creates whose insert is refused
                                     (with several shards: store/schedule-names.ts)
  Needs keys.lua included before it.
]]
local SCHEDULES = PREFIX .. ":{wf}:schedules"
local SCHEDULES_DUE = SCHEDULES .. ":due"
local SCHEDULE_FENCES = PREFIX .. ":{wf}:schedule-fences"

local function scheduleKey(name)
  return PREFIX .. ":{wf}:s:" .. name
end

-- The schedule's stored revision; nil when there is none.
local function scheduleRev(name)
  return tonumber(redis.call("HGET", scheduleKey(name), "rev"))
end

-- Writes (creates or replaces) a schedule, and its entry among the due ones (next fire 0: none).
local function writeSchedule(name, rev, nextFireAt, data)
  redis.call("HSET", scheduleKey(name), "rev", rev, "data", data)
  redis.call("ZADD", SCHEDULES, "0", name)
  if tonumber(nextFireAt) > 0 then
    redis.call("ZADD", SCHEDULES_DUE, nextFireAt, name)
  else
    redis.call("ZREM", SCHEDULES_DUE, name)
  end
end
