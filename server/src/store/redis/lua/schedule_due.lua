--[[
  scheduleDue (each shard; the store merges them, include/schedules.lua): the schedules due now, earliest next fire
  first (ties by name), and when the next one after now is due.
  KEYS[1]  <prefix>:{wf}:schedules:due
  ARGV     prefix, now, limit
  Returns  { next_fire_at of the first schedule due after now ("" if none), data, data, … }
]]
--@include keys
--@include schedules
local out = { "" }
local later = redis.call("ZRANGEBYSCORE", SCHEDULES_DUE, "(" .. ARGV[2], "+inf", "WITHSCORES", "LIMIT", "0", "1")
if later[2] then out[1] = later[2] end
for _, name in ipairs(redis.call("ZRANGEBYSCORE", SCHEDULES_DUE, "-inf", ARGV[2], "LIMIT", "0", ARGV[3])) do
  out[#out + 1] = redis.call("HGET", scheduleKey(name), "data")
end
return out
