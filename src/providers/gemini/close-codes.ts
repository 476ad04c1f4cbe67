/**
 * What to do when the upstream Gemini socket closes (DESIGN.md, "Provider facts";
 * test/fixtures/gemini/field-observations.md O8).
 *
 * - normal: the session ended cleanly (1000). Note Gemini 3.1 also closes with 1000 after
 *   ~15 s when a tool call is left unanswered (O6); the core's call timeouts prevent that.
 * - fatal: the same request would fail again. 1007 is "invalid argument" and also "context
 *   exhausted" (replaying the context repeats it); 1008 is policy: model not found or not
 *   supported on this API version. 1002/1003/1009/1010 are protocol or size faults of our
 *   own frames, equally deterministic.
 * - retry: transient, worth a reconnect with backoff (and resumption): 1006 abnormal drop,
 *   1011 internal error ("Deadline expired"), 1001 going away, 1012 restart, 1013 try
 *   again later, 1014 bad gateway.
 *
 * Unknown codes (1005 no status, 4xxx application codes) are treated as retry: the
 * reconnect path is bounded by its own backoff budget, whereas a wrong "fatal" ends a
 * session that could have continued.
 */

import type { CloseClass } from "../../vocabulary/provider-adapter.js";

export type { CloseClass };

const FATAL = new Set([1002, 1003, 1007, 1008, 1009, 1010]);

export function classifyClose(code: number): CloseClass {
  if (code === 1000) return "normal";
  if (FATAL.has(code)) return "fatal";
  // 1001, 1006, 1011, 1012, 1013, 1014 and every unknown code.
  return "retry";
}
