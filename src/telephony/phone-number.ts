/** Numbers a call may be transferred to: E.164 (a plus, the country code, up to 15 digits). */
export const E164 = /^\+[1-9]\d{6,14}$/;

/** Throws for a number that is not E.164 (where a number is taken, and again where dialled). */
export function requireE164(number: string): void {
  if (!E164.test(number)) throw new Error(`not an E.164 number: ${JSON.stringify(number)}`);
}
