/** Reported by `GET /health`; kept in step with package.json's version. */
export const VERSION = "0.1.0";
