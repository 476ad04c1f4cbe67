/**
 * PCM16 little-endian bytes ↔ Int16Array. Typed arrays use the host's byte order, which is
 * little-endian on every platform liveline runs on (workerd, V8, browsers); a big-endian host
 * still gets correct samples through a DataView, only slower.
 */

const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The samples in `bytes`. Where the bytes start on an even offset this is a view of the same
 * memory (no copy: writing one writes the other); otherwise they are copied, since an
 * Int16Array cannot start at an odd offset. An odd trailing byte is ignored.
 */
export function pcm16FromBytes(bytes: Uint8Array): Int16Array {
  const count = bytes.byteLength >> 1;
  if (HOST_IS_LITTLE_ENDIAN) {
    if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, count);
    return new Int16Array(bytes.slice(0, count * 2).buffer);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  const pcm = new Int16Array(count);
  for (let i = 0; i < count; i++) pcm[i] = view.getInt16(i * 2, true);
  return pcm;
}

/** The samples as little-endian bytes: a view of the same memory on a little-endian host. */
export function pcm16ToBytes(pcm: Int16Array): Uint8Array {
  if (HOST_IS_LITTLE_ENDIAN) return new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const bytes = new Uint8Array(pcm.byteLength);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i]!, true);
  return bytes;
}
