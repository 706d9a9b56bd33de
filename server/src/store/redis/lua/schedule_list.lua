--[[
  scheduleList (each shard; the store merges the pages, include/schedules.lua): schedules by name, after a cursor.
  KEYS[1]  <prefix>:{wf}:schedules
  ARGV     prefix, limit, after ("" from the first, else the name to continue after)
  Returns  the schedules' data, in name order.
]]
--@include keys
--@include schedules
local from = ARGV[3] == "" and "-" or "(" .. ARGV[3]
local out = {}
for _, name in ipairs(redis.call("ZRANGEBYLEX", SCHEDULES, from, "+", "LIMIT", "0", ARGV[2])) do
  out[#out + 1] = redis.call("HGET", scheduleKey(name), "data")
end
return out
