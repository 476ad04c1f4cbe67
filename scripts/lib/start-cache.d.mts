/** Types of start-cache.mjs (what its test imports). */
export function cacheable(root: string, config: string, cwd: string | undefined): boolean;
export function entryKey(root: string, ...parts: string[]): string;
export function cached(
  kind: string,
  key: string,
  make: (dir: string) => Promise<unknown>,
): Promise<string>;
export function copyEntry(entry: string, dir: string): void;
