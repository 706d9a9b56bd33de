--[[
  scheduleInsert (the schedule's shard, include/schedules.lua): a new schedule, unless one of its name
  exists or the quota is reached. With several shards the name was claimed on shard 0 first
  (store/schedule-names.ts), under `token`: refused if a create that took the claim over
  fenced that token (schedule_fence.lua), the fence then removed (a token inserts once).
  KEYS[1]  <prefix>:{wf}:s:<name>
  ARGV     prefix, max (the quota), name, rev, next_fire_at, data, token ("": one shard, no claim)
  Returns  "inserted", "exists", "full" or "fenced" (nothing written but the fence's removal).
]]
--@include keys
--@include schedules
local name = ARGV[3]
if ARGV[7] ~= "" and redis.call("SREM", SCHEDULE_FENCES, ARGV[7]) == 1 then return "fenced" end
if redis.call("EXISTS", scheduleKey(name)) == 1 then return "exists" end
if redis.call("ZCARD", SCHEDULES) >= tonumber(ARGV[2]) then return "full" end
writeSchedule(name, ARGV[4], ARGV[5], ARGV[6])
return "inserted"
