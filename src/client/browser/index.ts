/** liveline/client/browser: microphone capture and speech playback for web pages. */
export { type AudioSink, type Microphone, startMicrophone } from "./microphone.js";
export { createPlayer, type Player } from "./player.js";
