/** The Vonage stand-in, for tests and local runs (call-stand-in.ts; the engine: ../phone-line.ts). */
export * from "./call-stand-in.js";
