/** Types of web-server.mjs, for the TypeScript tests that serve a stand-in with it. */
export function serveWeb(
  handle: (request: Request) => Promise<Response>,
): Promise<{ url: string; close(): Promise<void> }>;
