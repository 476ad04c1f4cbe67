/** OpenAI Realtime: declared, not yet served (sessions asking for it get 400 provider_unavailable). */
import type { Provider } from "../provider.js";

export const openaiProvider: Provider = {
  name: "openai",
  unavailable: () => "the openai provider is not available yet",
  session() {
    throw new Error("the openai provider is not available yet");
  },
};
