--[[
  jobInsertMany (one shard): inserts pending jobs, all or nothing: every partition named
  must exist (its marker) before anything is written. A job whose idempotency key is live
  in its partition (the engine routes a key to one partition) is not inserted; the live
  job's id is returned instead, also for duplicates inside the batch.
  KEYS[1]  <prefix>:{shard}:running   (routing only: the partitions come from ARGV)
  ARGV     prefix, now, then per job: id, queue, partition, priority, body, runAfter,
           attemptsAllowed, customStatus, createdAt, idempotencyKey
  Returns  the ids, in request order.
  Errors   "QUEUE_NOT_FOUND <queue>" when a partition marker is missing.
]]
--@include keys
--@include job
local now = ARGV[2]
for i = 3, #ARGV, 10 do
  if redis.call("EXISTS", tagOf(ARGV[i + 1], ARGV[i + 2]) .. ":q") == 0 then
    return redis.error_reply("QUEUE_NOT_FOUND " .. ARGV[i + 1])
  end
end
local out = {}
for i = 3, #ARGV, 10 do
  local id, priority, key = ARGV[i], ARGV[i + 3], ARGV[i + 9]
  local tag = tagOf(ARGV[i + 1], ARGV[i + 2])
  local existing = key ~= "" and redis.call("HGET", tag .. ":idem", key)
  if existing and redis.call("EXISTS", jobKey(tag, existing)) == 1 then
    out[#out + 1] = existing
  else
    if key ~= "" then redis.call("HSET", tag .. ":idem", key, id) end
    local seq = redis.call("HINCRBY", tag .. ":n", "seq", 1)
    local job = { id = id, st = "p", pr = priority, ra = tonumber(ARGV[i + 5]), sq = seq }
    local fields = { "st", "p", "pr", priority, "ra", ARGV[i + 5], "aa", ARGV[i + 6], "ar", ARGV[i + 6],
      "ca", ARGV[i + 8], "ua", now, "sq", N(seq), "b", ARGV[i + 4] }
    if ARGV[i + 7] ~= "" then fields[#fields + 1] = "cs"; fields[#fields + 1] = ARGV[i + 7] end
    if key ~= "" then fields[#fields + 1] = "ik"; fields[#fields + 1] = key end
    redis.call("HSET", jobKey(tag, id), unpack(fields))
    index(tag, job)
    redis.call("ZADD", tag .. ":all", ARGV[i + 5], id)
    count(tag, "p", 1)
    if tonumber(priority) > (tonumber(redis.call("HGET", tag .. ":n", "maxpr")) or 0) then
      redis.call("HSET", tag .. ":n", "maxpr", priority)
    end
    out[#out + 1] = id
  end
end
flushCounts()
return out
