// adk-agent / adk-chat / adk-workflow: Google's Agent Development Kit for TypeScript (@google/adk)
// running an LlmAgent whose model is ADK's Gemini class (the Gemini API through @google/genai),
// pointed at fakellm by GOOGLE_GEMINI_BASE_URL, run by an InMemoryRunner with
// RunConfig.streamingMode SSE (streamGenerateContent?alt=sse). Spans come from ADK's own tracer
// (src/telemetry/tracing.ts, trace.getTracer('gcp.vertex.agent')) on the global tracer provider
// that lib/common.cjs registers.
//
//   adk-chat: an agent without tools, one streamed call.
//   adk-agent: a tool (count_words, a FunctionTool); step 1's reply gets a functionCall part on
//     its last event on the client (lib/rewrite-gemini.cjs), so the agent calls the model twice:
//     the text and the function call, then the text.
//   adk-workflow: the agent without tools as the one node of a Workflow (edges START -> agent):
//     one streamed call under invoke_workflow > execute_node.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import common from '../lib/common.cjs';
import rewriteGemini from '../lib/rewrite-gemini.cjs';

const scenario = process.env.CAPTURE_SCENARIO || path.basename(fileURLToPath(import.meta.url), '.mjs');
const withTool = scenario === 'adk-agent';
const asWorkflow = scenario === 'adk-workflow';
const model = `cap-${scenario}`;
const { provider, exporter } = common.setupTracing(scenario);
// Imported only now: ADK takes its tracer when its module loads (trace.getTracer at the top of
// telemetry/tracing.js) from its own @opentelemetry/api (1.9.0, exactly, nested under it), whose
// proxy provider never learns of a provider registered later through another copy of the API.
const { FunctionTool, Gemini, InMemoryRunner, LlmAgent, StreamingMode, Workflow, version: adkVersion } = await import('@google/adk');

// @google/genai builds its base URL when ADK's Gemini makes its client (lazily, at the first call)
// from GOOGLE_GEMINI_BASE_URL, and calls the global fetch: only the Gemini API's requests go
// through the recording (and, for adk-agent, rewriting) fetch.
process.env.GOOGLE_GEMINI_BASE_URL = common.fakellmURL();
const realFetch = globalThis.fetch;
const fetches = [];
const recording = common.recordingFetch(fetches, realFetch);
const geminiFetch = withTool ? rewriteGemini.functionCallFetch(recording, 'count_words') : recording;
globalThis.fetch = (input, init) => (String(input.url || input).includes('/v1beta/models/') ? geminiFetch(input, init) : realFetch(input, init));

const maxTokens = withTool ? 12 : 20;

function makeRoot(tokens) {
  const countWords = new FunctionTool({
    name: 'count_words',
    description: 'Counts the words of a text.',
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => ({ words: String(text).trim().split(/\s+/).length }),
  });
  const agent = new LlmAgent({
    name: 'capture_agent',
    instruction: 'You are a test agent.',
    model: new Gemini({ model, apiKey: common.DUMMY_API_KEY }),
    generateContentConfig: { maxOutputTokens: tokens },
    ...(withTool ? { tools: [countWords] } : {}),
  });
  if (!asWorkflow) return agent;
  return new Workflow({ name: 'capture_workflow', edges: [['START', agent]] });
}

// A step is one request: its chunks are the partial events with non-empty text that come while
// it is the latest request, and it ends at the first complete (non-partial) model event after
// them, which ADK yields when the stream closes.
async function run(tokens) {
  const root = makeRoot(tokens);
  const runner = new InMemoryRunner({ agent: root, appName: 'capture_app' });
  const session = await runner.sessionService.createSession({ appName: 'capture_app', userId: 'capture_user' });
  const steps = [];
  const kinds = new Map();
  const first = fetches.length;
  for await (const ev of runner.runAsync({
    userId: 'capture_user',
    sessionId: session.id,
    newMessage: { role: 'user', parts: [{ text: 'Say hello.' }] },
    runConfig: { streamingMode: StreamingMode.SSE },
  })) {
    const parts = (ev.content && ev.content.parts) || [];
    const kind = `${ev.partial ? 'partial' : 'complete'}:${parts.map((p) => Object.keys(p).filter((k) => p[k] !== undefined).join('+')).join(',')}`;
    kinds.set(kind, (kinds.get(kind) || 0) + 1);
    const i = fetches.length - first - 1;
    if (i < 0 || !ev.content || ev.content.role !== 'model') continue;
    if (!steps[i]) steps[i] = { timing: new common.Timing(), kinds: [] };
    const step = steps[i];
    if (ev.partial) {
      for (const p of parts) {
        if (typeof p.text === 'string' && p.text) { step.timing.chunk(); step.kinds.push('text'); }
      }
    } else if (step.timing.end === null) {
      step.timing.finish();
      step.finishReason = ev.finishReason;
      step.functionCall = parts.some((p) => p.functionCall);
      if (ev.usageMetadata) step.outputTokens = ev.usageMetadata.candidatesTokenCount;
    }
  }
  if (process.env.CAPTURE_DEBUG) console.error('events:', JSON.stringify([...kinds]));
  return steps;
}

await common.warmup(() => run(5));
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const appStart = common.nowUnixNano();
const steps = await run(maxTokens);
const appEnd = common.nowUnixNano();
const want = withTool ? 2 : 1;
if (steps.length !== want || fetches.length !== want) throw new Error(`expected ${want} steps and ${want} requests, got ${steps.length} and ${fetches.length}`);

const packages = common.packageVersions(['@google/adk', '@google/genai', 'zod', '@opentelemetry/api', '@opentelemetry/sdk-trace-base']);
if (packages['@google/adk'] !== adkVersion) throw new Error(`@google/adk ${packages['@google/adk']} installed, ${adkVersion} loaded`);
await common.writeFixtures({
  scenario,
  instrumentation: `@google/adk tracer (${asWorkflow ? 'Workflow START -> LlmAgent' : 'LlmAgent'}, InMemoryRunner.runAsync, streamingMode SSE)`,
  packages,
  model,
  provider,
  exporter,
  wallMinusPerf,
  // As in vercel7-agent: a step's first event reaches the application after the fetch.
  requests: common.agentStepRequests(steps, fetches, 'first_event_unix_nano', { withExtra: withTool, more: (s) => ({ function_call: s.functionCall }) }),
  notes: `${withTool ? "ADK LlmAgent with tool count_words (FunctionTool), maxOutputTokens 12. Step 1's last streamed event gets a functionCall part {name: count_words, args: {text}} on the client (lib/rewrite-gemini.cjs), its text parts unchanged, so the agent runs the tool and calls the model again; both steps count text deltas as chunks." : asWorkflow ? 'An ADK Workflow whose one node (START -> agent) is the LlmAgent without tools, maxOutputTokens 20: one streamed call.' : 'ADK LlmAgent without tools, maxOutputTokens 20: one streamed call.'} Model: ADK's Gemini class (@google/genai, Gemini API) against fakellm (GOOGLE_GEMINI_BASE_URL), InMemoryRunner.runAsync with streamingMode SSE (streamGenerateContent?alt=sse). chunk_unix_nano: every partial model event with non-empty text, when the application's loop got it; end_unix_nano: the complete model event ADK yields when the stream closes. A step's start_unix_nano is when @google/genai called fetch. The run: start ${appStart}, end ${appEnd} (unix ns). Spans: ADK's tracer (scope gcp.vertex.agent) on the global NodeTracerProvider; it stamps no TTFT on any span.`,
});
