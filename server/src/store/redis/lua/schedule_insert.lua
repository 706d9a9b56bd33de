--[[
  scheduleInsert (the schedule's shard, include/schedules.lua): a new schedule, unless one of its name
  exists or the quota is reached.
  KEYS[1]  <prefix>:{wf}:s:<name>
  ARGV     prefix, max (the quota), name, rev, next_fire_at, data
  Returns  "inserted", "exists" or "full" (nothing written).
]]
--@include keys
--@include schedules
local name = ARGV[3]
if redis.call("EXISTS", scheduleKey(name)) == 1 then return "exists" end
if redis.call("ZCARD", SCHEDULES) >= tonumber(ARGV[2]) then return "full" end
writeSchedule(name, ARGV[4], ARGV[5], ARGV[6])
return "inserted"
