--[[
  scheduleDelete (the schedule's shard, include/schedules.lua): a schedule and its entries.
  KEYS[1]  <prefix>:{wf}:s:<name>
  ARGV     prefix, name
  Returns  1 deleted; 0 there was none.
]]
--@include keys
--@include schedules
local name = ARGV[2]
redis.call("ZREM", SCHEDULES, name)
redis.call("ZREM", SCHEDULES_DUE, name)
return redis.call("DEL", scheduleKey(name))
