-- liveline's usage database: one row per session, its latest closing record (written when the
-- session ends or its model connection idles). GET /v1/usage sums it.
CREATE TABLE session_usage (
  session_id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  -- 'idle' (the session may go on) or 'ended'
  state TEXT NOT NULL CHECK (state IN ('idle', 'ended')),
  -- deleted, limit, caller_hung_up, agent_hung_up, transferred, stream_dropped, carrier_ended
  ended_by TEXT,
  -- the cap that ended it: duration, cost, turns, tool_calls
  limit_name TEXT,
  -- ISO 8601 (UTC): the session's creation, and when this record was made
  created_at TEXT NOT NULL,
  closed_at TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  model_live_ms INTEGER NOT NULL,
  -- a model billed by time (GPT-Live): the seconds it metered
  metered_seconds REAL NOT NULL,
  responses INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  response_tokens INTEGER NOT NULL,
  total_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL,
  thoughts_tokens INTEGER NOT NULL,
  -- JSON: {"prompt": {...}, "response": {...}, "cached": {...}} tokens by modality
  modalities TEXT NOT NULL,
  -- priced, partial (cost_usd covers what had a price) or unpriced (cost_usd is NULL)
  cost_status TEXT NOT NULL CHECK (cost_status IN ('priced', 'partial', 'unpriced')),
  cost_usd REAL,
  -- JSON list of what had no price (NULL when priced)
  unpriced TEXT,
  turns INTEGER NOT NULL,
  tool_calls INTEGER NOT NULL,
  -- the session's record number: an older copy never replaces a newer one
  version INTEGER NOT NULL
);
CREATE INDEX session_usage_by_created ON session_usage (created_at);
CREATE INDEX session_usage_by_agent ON session_usage (agent, created_at);
