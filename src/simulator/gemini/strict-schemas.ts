/**
 * The simulator's reading of client messages: strict, as the service's protobuf JSON parser
 * is. A field the proto does not have closes the connection with 1007 ("Invalid JSON payload
 * received. Unknown name …"), where liveline's own adapter schemas (gemini/schemas.ts) are
 * loose on purpose (they read server frames that gain fields over time).
 *
 * Strict: the message, setup, generation config, tools and function declarations, client
 * content, content and parts, realtime input, tool responses. Assumed (accepted as given):
 * the inside of speechConfig, thinkingConfig, realtimeInputConfig, proactivity and the
 * declarations' parameter schemas — their fields vary by release and no recording pins them.
 */
import { z } from "zod";
import { Behavior, Int64, Modality, Scheduling } from "../../providers/gemini/schemas.js";

const Free = z.record(z.string(), z.unknown());

const Blob = z.strictObject({ data: z.string(), mimeType: z.string().optional() });

const FunctionCall = z.strictObject({
  id: z.string().optional(),
  name: z.string(),
  args: Free.optional(),
  partialArgs: z.array(Free).optional(),
  willContinue: z.boolean().optional(),
});

const FunctionResponse = z.strictObject({
  id: z.string().optional(),
  name: z.string(),
  response: Free.optional(),
  parts: z.array(Free).optional(),
  willContinue: z.boolean().optional(),
  scheduling: Scheduling.optional(),
});

const Part = z.strictObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
  inlineData: Blob.optional(),
  fileData: z.strictObject({ fileUri: z.string(), mimeType: z.string().optional() }).optional(),
  functionCall: FunctionCall.optional(),
  functionResponse: FunctionResponse.optional(),
  executableCode: Free.optional(),
  codeExecutionResult: Free.optional(),
  videoMetadata: Free.optional(),
  mediaResolution: Free.optional(),
});

export const StrictContent = z.strictObject({
  role: z.string().optional(),
  parts: z.array(Part).optional(),
});

const FunctionDeclaration = z.strictObject({
  name: z.string(),
  description: z.string().optional(),
  parameters: Free.optional(),
  parametersJsonSchema: z.unknown().optional(),
  response: Free.optional(),
  responseJsonSchema: z.unknown().optional(),
  behavior: Behavior.optional(),
});

const Tool = z.strictObject({
  functionDeclarations: z.array(FunctionDeclaration).optional(),
  googleSearch: Free.optional(),
  googleSearchRetrieval: Free.optional(),
  codeExecution: Free.optional(),
  urlContext: Free.optional(),
  googleMaps: Free.optional(),
  computerUse: Free.optional(),
  fileSearch: Free.optional(),
  retrieval: Free.optional(),
});

const GenerationConfig = z.strictObject({
  candidateCount: z.number().int().optional(),
  maxOutputTokens: z.number().int().optional(),
  temperature: z.number().optional(),
  topP: z.number().optional(),
  topK: z.number().optional(),
  seed: z.number().int().optional(),
  presencePenalty: z.number().optional(),
  frequencyPenalty: z.number().optional(),
  stopSequences: z.array(z.string()).optional(),
  responseMimeType: z.string().optional(),
  responseModalities: z.array(Modality).optional(),
  speechConfig: Free.optional(),
  thinkingConfig: Free.optional(),
  mediaResolution: z.string().optional(),
  enableAffectiveDialog: z.boolean().optional(),
});

const StrictSetup = z.strictObject({
  model: z.string(),
  generationConfig: GenerationConfig.optional(),
  systemInstruction: StrictContent.optional(),
  tools: z.array(Tool).optional(),
  realtimeInputConfig: Free.optional(),
  sessionResumption: z
    .strictObject({ handle: z.string().optional(), transparent: z.boolean().optional() })
    .optional(),
  contextWindowCompression: z
    .strictObject({
      triggerTokens: Int64.optional(),
      slidingWindow: z.strictObject({ targetTokens: Int64.optional() }).optional(),
    })
    .optional(),
  inputAudioTranscription: Free.optional(),
  outputAudioTranscription: Free.optional(),
  proactivity: Free.optional(),
  historyConfig: z
    .strictObject({ initialHistoryInClientContent: z.boolean().optional() })
    .optional(),
  explicitVadSignal: z.boolean().optional(),
});

const StrictClientContent = z.strictObject({
  turns: z.array(StrictContent).optional(),
  turnComplete: z.boolean().optional(),
});

const StrictRealtimeInput = z.strictObject({
  audio: Blob.optional(),
  video: Blob.optional(),
  text: z.string().optional(),
  audioStreamEnd: z.boolean().optional(),
  activityStart: z.strictObject({}).optional(),
  activityEnd: z.strictObject({}).optional(),
  mediaChunks: z.array(Blob).optional(),
});

const StrictToolResponse = z.strictObject({ functionResponses: z.array(FunctionResponse) });

/**
 * A oneof: exactly one member, and no other top-level key. `contextUpdate` (sent by
 * @google/genai 3.x's `sendContextUpdate`) is taken and has no effect here (assumed).
 */
export const StrictClientMessage = z.union([
  z.strictObject({ setup: StrictSetup }),
  z.strictObject({ clientContent: StrictClientContent }),
  z.strictObject({ realtimeInput: StrictRealtimeInput }),
  z.strictObject({ toolResponse: StrictToolResponse }),
  z.strictObject({ contextUpdate: Free }),
]);

export type StrictClientMessage = z.infer<typeof StrictClientMessage>;

/**
 * The first unknown field of a refused message, named as the service names it
 * (`Unknown name "x" at 'setup.generation_config'`), or a generic reason.
 */
export function refusalReason(json: unknown): string {
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return "Invalid JSON payload received. Expected an object.";
  }
  const keys = Object.keys(json);
  const member = keys.find((k) =>
    ["setup", "clientContent", "realtimeInput", "toolResponse"].includes(k),
  );
  if (member === undefined || keys.length !== 1) {
    const unknown = keys.find((k) => k !== member);
    return unknown === undefined
      ? "Invalid JSON payload received. Empty client message."
      : `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`;
  }
  const schema = StrictClientMessage.options.find((o) => member in o.shape);
  const parsed = schema?.safeParse(json);
  const issue = parsed?.success === false ? parsed.error.issues[0] : undefined;
  if (issue === undefined) return "Invalid JSON payload received.";
  const at = issue.path.filter((p) => typeof p === "string").join(".");
  if (issue.code === "unrecognized_keys") {
    return `Invalid JSON payload received. Unknown name "${issue.keys[0]}" at '${at}': Cannot find field.`;
  }
  return `Invalid value at '${at}': ${issue.message}`;
}
