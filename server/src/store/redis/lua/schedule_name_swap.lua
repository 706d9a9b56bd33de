--[[
  A schedule name's claim in the registry (shard 0, with several shards:
  store/schedule-names.ts ScheduleNameSteps.claimSwap): set (or removed) only over the
  claim expected, a new one only while the quota has room.
  KEYS[1]  <prefix>:{meta}:schedule-names   hash: name -> "<shard> <token>"
  ARGV     prefix, name, expected ("": none), next ("": remove), max (the quota)
  Returns  "done"; "full" (nothing written); or "changed <claim now held>" ("changed": none).
]]
local held = redis.call("HGET", KEYS[1], ARGV[2]) or ""
if held ~= ARGV[3] then return held == "" and "changed" or "changed " .. held end
if ARGV[4] == "" then
  redis.call("HDEL", KEYS[1], ARGV[2])
  return "done"
end
if held == "" and redis.call("HLEN", KEYS[1]) >= tonumber(ARGV[5]) then return "full" end
redis.call("HSET", KEYS[1], ARGV[2], ARGV[4])
return "done"
