/**
 * Listed tools, kept per isolate for a short while: sessions of the same agent starting close
 * together list each server once. Keyed by agent, server, URL and headers (a per-user token
 * lists per user); a server's `notifications/tools/list_changed` drops its entries.
 */
import type { McpListing } from "./server-connection.js";

/** How long a listing serves later sessions. */
export const LISTING_TTL_MS = 60_000;

const listings = new Map<string, { listing: McpListing; at: number }>();

/** The cache key of an agent's server (its headers hashed, never kept as they are). */
export function listingKey(
  agent: string,
  server: { name: string; url: string; headers?: Readonly<Record<string, string>> | undefined },
): string {
  const headers = JSON.stringify(Object.entries(server.headers ?? {}).sort());
  return [agent, server.name, server.url, fnv1a(headers)].join("\u0000");
}

export function cachedListing(key: string, now: number): McpListing | null {
  const hit = listings.get(key);
  if (hit === undefined || now - hit.at > LISTING_TTL_MS) return null;
  return hit.listing;
}

export function keepListing(key: string, listing: McpListing, now: number): void {
  listings.set(key, { listing, at: now });
}

/** A server said its tools changed: every agent's listing of it is dropped. */
export function dropListings(server: { name: string; url: string }): void {
  for (const key of listings.keys()) {
    const [, name, url] = key.split("\u0000");
    if (name === server.name && url === server.url) listings.delete(key);
  }
}

/** A 32-bit FNV-1a hash: a cache key, not a secret's protection. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16);
}
