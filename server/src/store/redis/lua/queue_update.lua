--[[
  queueUpdate on shard 0: replaces the config of an existing queue and, when partitions
  grew, its placement. A placement only ever grows: one shorter than the stored one (a
  concurrent update that grew it further) is ignored.
  KEYS[1]  <prefix>:{meta}:queues
  KEYS[2]  <prefix>:{meta}:created
  KEYS[3]  <prefix>:{meta}:placement
  ARGV     prefix, name, configJson, placement ("" = unchanged)
  Returns  the created_at, or nil when the queue does not exist.
]]
if redis.call("HEXISTS", KEYS[1], ARGV[2]) == 0 then return nil end
redis.call("HSET", KEYS[1], ARGV[2], ARGV[3])
if ARGV[4] ~= "" then
  local function count(s)
    local n = 0
    for _ in string.gmatch(s or "", "[^,]+") do n = n + 1 end
    return n
  end
  if count(ARGV[4]) > count(redis.call("HGET", KEYS[3], ARGV[2])) then redis.call("HSET", KEYS[3], ARGV[2], ARGV[4]) end
end
return redis.call("HGET", KEYS[2], ARGV[2])
