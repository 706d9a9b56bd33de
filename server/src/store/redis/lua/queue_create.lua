--[[
  queueCreate's record on shard 0 (the partition markers are written first, on their
  shards): idempotent, the first config wins.
  KEYS[1]  <prefix>:{meta}:queues    hash name -> config JSON
  KEYS[2]  <prefix>:{meta}:created   hash name -> created_at
  ARGV     prefix, name, configJson, now
  Returns  { created 0/1, configJson, createdAt }
]]
local created = redis.call("HSETNX", KEYS[1], ARGV[2], ARGV[3])
if created == 1 then redis.call("HSET", KEYS[2], ARGV[2], ARGV[4]) end
return { created, redis.call("HGET", KEYS[1], ARGV[2]), redis.call("HGET", KEYS[2], ARGV[2]) }
