--[[
  The lean paths (below) of the hand-out, startBuffered (job_start_many.lua), and of the ACK
  without a status, succeedRunning (job_complete_many.lua); the claim's is written out in
  job_claim_many.lua.
  Needs keys.lua, transitions.lua, job_record.lua, ledgers.lua and indexes.lua included
  before it.
]]
-- HEAD in parts, for the lean paths: its fields up to the token (st, be, bn, ce, ua, fa:
-- what an ACK rewrites), the same and the token's length byte (which a hand-out keeps the
-- EXTRAS_FLAG of), and where at and ar follow the token.
local HEAD_START = "<c1dI4ddd"
local HEAD_TO_TOKEN = "<c1dI4dddB"
local TOKEN_AT = TOKEN_LENGTH_AT -- its length byte, then its slot
local ATTEMPT_AT = TOKEN_AT + 1 + TOKEN_WIDTH

-- The lean paths (claim, hand-out, ACK) read and write a job's HEAD only, and the hand-out
-- and ACK build no job or patch table per job: what apply() does for them, unrolled (at
-- batches of 100 the tables and the generic loop were a third of those scripts' time in
-- Redis). The rules stay in transitions.lua (handOutValues, succeedValues, checkClaimValues).
-- Hand-out: a job buffered under `epoch` becomes running per handOutValues and moves from
-- its buffer batch to the hand-out's claim check, as unindex()/index() do for "b" and "r".
-- `paddedToken` is padToken(token), made once per call. The caller counts the state
-- change. Returns whether the job started.
local function startBuffered(tag, id, epoch, token, paddedToken, expiresAt, retryDelay, now)
  local key = jobKey(tag, id)
  local head = redis.call("GETRANGE", key, OFFSET_0, HEAD_LAST)
  if head == "" then return false end
  local st, be, bn, _, _, fa, tokenLength = struct.unpack(HEAD_TO_TOKEN, head)
  if st ~= "b" or be ~= epoch then return false end
  local at, ar = struct.unpack("<dd", head, ATTEMPT_AT) -- (not the token between: no string for it)
  local nst, nbe, nce, nua, nat, nar, nct, nrd = handOutValues(at, ar, token, expiresAt, retryDelay, now)
  local padded = nct == token and paddedToken or padToken(nct)
  local flag = tokenLength >= EXTRAS_FLAG and EXTRAS_FLAG or 0 -- a job with extras keeps them
  redis.call("SETRANGE", key, OFFSET_0, struct.pack(HEAD, nst, nbe, bn, nce, nua, fa, #nct + flag, padded, nat, nar, nrd))
  ledgerLeave(bufferLedger(tag), batchNameOf(be, bn))
  ledgerJoin(claimChecks, checkNameOf(nct, nce), nce, id)
  return true
end

-- ACK: a running job whose succeed appends no status and ends no ordering key's turn.
-- Checks the claim (checkClaimValues), rewrites the head's first fields (state …
-- finished_at) per succeedValues, and moves the job from its claim check to the retention
-- list. The caller counts the state change. Returns the outcome ("a", "s" or "n"), or nil
-- for a job with an ordering key, or one with extras (a workflow job, or a traced one): it
-- takes the whole path (apply(), which leaves the key's sequence; the caller's answer for
-- a workflow job). A flagged length byte never matches a token's, so telling such a job
-- apart costs only the ACKs that do not match.
local NO_KEY = "\0\0\0\0" -- an ordering key's length of 0
-- A token as its slot starts when it holds that token: its length byte, then its bytes.
local storedTokens = {}
local function storedToken(token)
  local stored = storedTokens[token]
  if not stored then
    stored = string.char(#token) .. token
    storedTokens[token] = stored
  end
  return stored
end
local function succeedRunning(tag, id, token, now)
  local key = jobKey(tag, id)
  local head = redis.call("GETRANGE", key, OFFSET_0, KEY_LENGTH_LAST) -- through the ordering key's length
  if head == "" then return "n" end
  local st, be, bn, ce = struct.unpack(HEAD_START, head)
  -- The stored token is compared where it lies (a plain find anchored by its position)
  -- rather than unpacked and cut out: two strings fewer per job.
  local ct = #token <= TOKEN_WIDTH and string.find(head, storedToken(token), TOKEN_AT, true) == TOKEN_AT and token or nil
  local outcome = checkClaimValues(st, ct, token)
  if outcome ~= "a" then
    if string.byte(head, TOKEN_AT) >= EXTRAS_FLAG then return nil end
    return outcome
  end
  if string.find(head, NO_KEY, KEY_LENGTH_AT, true) ~= KEY_LENGTH_AT then return nil end
  local nst, nce, nua, nfa = succeedValues(now)
  redis.call("SETRANGE", key, OFFSET_0, struct.pack(HEAD_START, nst, be, bn, nce, nua, nfa))
  ledgerLeave(claimChecks, checkNameOf(ct, ce))
  listSucceededAt(tag, nfa, id)
  return "a"
end
