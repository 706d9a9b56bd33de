--[[
  queueCreate's record on shard 0 (the partition markers are written first, on their
  shards): idempotent, the first config and placement win.
  KEYS[1]  <prefix>:{meta}:queues      hash name -> config JSON
  KEYS[2]  <prefix>:{meta}:created     hash name -> created_at
  KEYS[3]  <prefix>:{meta}:placement   hash name -> shard per partition ("0,1,2")
  ARGV     prefix, name, configJson, now, placement
  Returns  { created 0/1, configJson, createdAt, placement or false (a queue created
           before placements were stored) }
]]
local created = redis.call("HSETNX", KEYS[1], ARGV[2], ARGV[3])
if created == 1 then
  redis.call("HSET", KEYS[2], ARGV[2], ARGV[4])
  redis.call("HSET", KEYS[3], ARGV[2], ARGV[5])
end
return { created, redis.call("HGET", KEYS[1], ARGV[2]), redis.call("HGET", KEYS[2], ARGV[2]), redis.call("HGET", KEYS[3], ARGV[2]) }
