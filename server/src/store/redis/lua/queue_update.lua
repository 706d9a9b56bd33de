--[[
  queueUpdate on shard 0: replaces the config of an existing queue.
  KEYS[1]  <prefix>:{meta}:queues
  KEYS[2]  <prefix>:{meta}:created
  ARGV     prefix, name, configJson
  Returns  the created_at, or nil when the queue does not exist.
]]
if redis.call("HEXISTS", KEYS[1], ARGV[2]) == 0 then return nil end
redis.call("HSET", KEYS[1], ARGV[2], ARGV[3])
return redis.call("HGET", KEYS[2], ARGV[2])
