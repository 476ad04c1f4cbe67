// The project has no @types/node (the Worker code must not lean on Node), but these unit
// tests run in Node and read the fixtures in test/fixtures from disk. Declare just what they use;
// ambient module declarations merge with @types/node should it ever be added.
declare module "node:fs" {
  export function readFileSync(path: string): Uint8Array;
  export function readdirSync(path: string): string[];
}
declare module "node:path" {
  export function resolve(...segments: string[]): string;
  export function join(...segments: string[]): string;
}
