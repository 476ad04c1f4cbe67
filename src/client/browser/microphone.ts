/**
 * Microphone capture for the browser: the device's audio, resampled in an AudioWorklet to
 * what liveline takes (PCM16, 16 kHz, mono), in 20 ms chunks.
 */

/** What a microphone sends its chunks to (a LivelineClient). */
export interface AudioSink {
  sendAudio(pcm: ArrayBuffer): void;
}

export interface Microphone {
  /** Stops capturing; the device is released. */
  stop(): void;
  readonly sampleRate: number;
}

const TARGET_RATE = 16_000;
const CHUNK_SAMPLES = 320; // 20 ms at 16 kHz

// The worklet runs on the audio thread: linear interpolation from the device rate, the
// fractional read position carried across render quanta, Int16 chunks transferred out.
const WORKLET = `
class LivelineCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / ${TARGET_RATE};
    this.pos = 0;
    this.prev = 0;
    this.out = new Int16Array(${CHUNK_SAMPLES});
    this.n = 0;
  }
  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    // Positions are relative to this quantum; -1 is the previous quantum's last sample.
    while (this.pos < input.length - 1) {
      const i = Math.floor(this.pos);
      const frac = this.pos - i;
      const a = i < 0 ? this.prev : input[i];
      const b = input[i + 1];
      const v = Math.max(-1, Math.min(1, a + (b - a) * frac));
      this.out[this.n++] = v < 0 ? v * 0x8000 : v * 0x7fff;
      if (this.n === ${CHUNK_SAMPLES}) {
        this.port.postMessage(this.out.buffer, [this.out.buffer]);
        this.out = new Int16Array(${CHUNK_SAMPLES});
        this.n = 0;
      }
      this.pos += this.step;
    }
    this.pos -= input.length;
    this.prev = input[input.length - 1];
    return true;
  }
}
registerProcessor("liveline-capture", LivelineCapture);
`;

/** Asks for the microphone and streams it to `sink` until `stop()`. */
export async function startMicrophone(
  sink: AudioSink,
  opts: { deviceId?: string } = {},
): Promise<Microphone> {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: {
      channelCount: 1,
      echoCancellation: true,
      noiseSuppression: true,
      ...(opts.deviceId === undefined ? {} : { deviceId: opts.deviceId }),
    },
  });
  const context = new AudioContext();
  const url = URL.createObjectURL(new Blob([WORKLET], { type: "text/javascript" }));
  try {
    await context.audioWorklet.addModule(url);
  } finally {
    URL.revokeObjectURL(url);
  }
  const source = context.createMediaStreamSource(stream);
  const node = new AudioWorkletNode(context, "liveline-capture");
  node.port.onmessage = (event: MessageEvent<ArrayBuffer>) => sink.sendAudio(event.data);
  source.connect(node);
  return {
    sampleRate: context.sampleRate,
    stop() {
      node.port.onmessage = null;
      source.disconnect();
      node.disconnect();
      for (const track of stream.getTracks()) track.stop();
      void context.close();
    },
  };
}
