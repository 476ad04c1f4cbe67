/** PCM16 little-endian bytes ↔ samples: byte order, odd offsets and odd lengths. */
import { describe, expect, it } from "vitest";
import { pcm16FromBytes, pcm16ToBytes } from "../../src/telephony/audio/pcm.js";

describe("PCM16 bytes", () => {
  it("reads little-endian samples", () => {
    expect([
      ...pcm16FromBytes(Uint8Array.of(0x01, 0x00, 0xff, 0x7f, 0x00, 0x80, 0xff, 0xff)),
    ]).toEqual([1, 32767, -32768, -1]);
  });

  it("ignores an odd trailing byte", () => {
    expect([...pcm16FromBytes(Uint8Array.of(0x34, 0x12, 0x99))]).toEqual([0x1234]);
  });

  it("copies bytes that start at an odd offset, and views bytes at an even one", () => {
    const buffer = Uint8Array.of(0xaa, 0x34, 0x12, 0x78, 0x56, 0xbb);
    expect([...pcm16FromBytes(buffer.subarray(1, 5))]).toEqual([0x1234, 0x5678]);
    const even = buffer.subarray(2, 6);
    const view = pcm16FromBytes(even);
    expect(view.buffer).toBe(buffer.buffer);
    expect([...view]).toEqual([0x7812, -17578]);
  });

  it("writes little-endian bytes, and reads them back", () => {
    const pcm = Int16Array.of(1, -1, 32767, -32768, 0x1234);
    const bytes = pcm16ToBytes(pcm);
    expect([...bytes]).toEqual([1, 0, 255, 255, 255, 127, 0, 128, 0x34, 0x12]);
    expect([...pcm16FromBytes(bytes)]).toEqual([...pcm]);
    expect(pcm16ToBytes(pcm.subarray(3)).length).toBe(4);
  });
});
