/**
 * google.protobuf.Duration in its proto3 JSON form ("10s", "1.5s", "0.000340s") to
 * milliseconds. goAway.timeLeft uses it; a number would be a different wire format, so
 * anything else is rejected (undefined) rather than guessed.
 */
export function durationToMs(duration: string): number | undefined {
  const match = /^(-?\d+(?:\.\d+)?)s$/.exec(duration);
  if (match === null || match[1] === undefined) return undefined;
  return Math.round(Number(match[1]) * 1000);
}
