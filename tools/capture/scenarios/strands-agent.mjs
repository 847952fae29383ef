// strands-agent / strands-chat / strands-graph: a Strands Agents (TypeScript, @strands-agents/sdk)
// agent streamed with agent.stream, traced by the SDK's own Tracer (src/telemetry/tracer.ts) on the
// global tracer provider that lib/common.cjs registers. The model is the SDK's OpenAIModel with
// api 'chat' (Chat Completions, streamed with stream_options.include_usage) pointed at fakellm.
//
//   strands-chat: an agent without tools, one streamed call.
//   strands-agent: a tool (count_words); step 1's reply is turned into a tool call on the client
//     (lib/rewrite.cjs, as in vercel7-agent), so the agent calls the model twice: the tool call,
//     then the text.
//   strands-graph: the agent without tools as the one node of a Graph (@strands-agents/sdk
//     /multiagent), graph.stream: one streamed call under invoke_graph > node.
//
// The SDK is installed in the strands/ workspace (see ../README.md, Package versions).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import common from '../lib/common.cjs';
import rewrite from '../lib/rewrite.cjs';
import { Agent, Graph, OpenAIModel, tool, version as strandsVersion } from 'otelitl-capture-strands';

const scenario = process.env.CAPTURE_SCENARIO || path.basename(fileURLToPath(import.meta.url), '.mjs');
const withTool = scenario === 'strands-agent';
const asGraph = scenario === 'strands-graph';
const model = `cap-${scenario}`;
const { provider, exporter } = common.setupTracing(scenario);

const fetches = [];
const recording = common.recordingFetch(fetches);
const maxTokens = withTool ? 12 : 20;

function makeAgent(tokens) {
  const countWords = tool({
    name: 'count_words',
    description: 'Counts the words of a text.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    callback: (input) => ({ words: String(input.text).trim().split(/\s+/).length }),
  });
  return new Agent({
    name: 'capture-agent',
    systemPrompt: 'You are a test agent.',
    printer: false,
    model: new OpenAIModel({
      api: 'chat',
      modelId: model,
      apiKey: common.DUMMY_API_KEY,
      maxTokens: tokens,
      clientConfig: {
        baseURL: `${common.fakellmURL()}/v1`,
        fetch: withTool ? rewrite.toolCallFetch(recording, 'count_words') : recording,
        maxRetries: 0,
      },
    }),
    ...(withTool ? { tools: [countWords] } : {}),
  });
}

// A step begins at the model's message start and ends at its message stop; a chunk is a
// non-empty text or tool-input delta, when the application's loop got it.
function observe(ev, state) {
  const me = ev.type === 'modelStreamUpdateEvent' ? ev.event : null;
  if (!me) return;
  switch (me.type) {
    case 'modelMessageStartEvent':
      state.cur = { timing: new common.Timing(), kinds: [] };
      state.steps.push(state.cur);
      break;
    case 'modelContentBlockDeltaEvent': {
      const d = me.delta || {};
      if (d.type === 'textDelta' && d.text) { state.cur.timing.chunk(); state.cur.kinds.push('textDelta'); }
      if (d.type === 'toolUseInputDelta' && d.input) { state.cur.timing.chunk(); state.cur.kinds.push('toolUseInputDelta'); }
      break;
    }
    case 'modelMessageStopEvent':
      state.cur.timing.finish();
      state.cur.finishReason = me.stopReason;
      break;
    case 'modelMetadataEvent':
      if (me.usage) state.cur.outputTokens = me.usage.outputTokens;
      break;
  }
}

async function run(tokens) {
  const state = { steps: [], cur: null, kinds: new Map() };
  const agent = makeAgent(tokens);
  const note = (ev) => state.kinds.set(ev.type, (state.kinds.get(ev.type) || 0) + 1);
  if (asGraph) {
    const graph = new Graph({ id: 'capture-graph', nodes: [agent], edges: [] });
    for await (const ev of graph.stream('Say hello.')) {
      note(ev);
      // A node's agent events come wrapped: the graph's node stream event holds the agent's.
      const inner = ev.event || (ev.inner && ev.inner.event) || null;
      if (ev.type === 'modelStreamUpdateEvent') observe(ev, state);
      else if (inner && inner.type === 'modelStreamUpdateEvent') observe(inner, state);
    }
  } else {
    for await (const ev of agent.stream('Say hello.')) {
      note(ev);
      observe(ev, state);
    }
  }
  if (process.env.CAPTURE_DEBUG) console.error('events:', JSON.stringify([...state.kinds]));
  return state.steps;
}

await common.warmup(() => run(5));
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const appStart = common.nowUnixNano();
const steps = await run(maxTokens);
const appEnd = common.nowUnixNano();
const want = withTool ? 2 : 1;
if (steps.length !== want || fetches.length !== want) throw new Error(`expected ${want} steps and ${want} requests, got ${steps.length} and ${fetches.length}`);

const packages = common.packageVersions(['openai', 'zod', '@opentelemetry/api', '@opentelemetry/sdk-trace-base']);
await common.writeFixtures({
  scenario,
  instrumentation: `@strands-agents/sdk Tracer (${asGraph ? 'Graph.stream, one agent node' : 'Agent.stream'})`,
  packages: { '@strands-agents/sdk': strandsVersion, ...packages },
  model,
  provider,
  exporter,
  wallMinusPerf,
  // As in vercel7-agent: the message start event reaches the application after the fetch.
  requests: common.agentStepRequests(steps, fetches, 'message_start_unix_nano', { withExtra: withTool }),
  notes: `${withTool ? `Strands Agent with tool count_words, OpenAIModel maxTokens 12. Step 1's streamed text is rewritten on the client into a streamed tool call (lib/rewrite.cjs, as in vercel7-agent), so step 1 counts tool-input deltas as chunks and step 2 text deltas.` : asGraph ? 'A Strands Graph whose one node is the agent without tools, graph.stream(prompt), OpenAIModel maxTokens 20: one streamed Chat Completions call.' : 'Strands Agent without tools, agent.stream(prompt), OpenAIModel maxTokens 20: one streamed Chat Completions call.'} Model: @strands-agents/sdk OpenAIModel with api 'chat' against fakellm (stream_options.include_usage). chunk_unix_nano: every non-empty textDelta (or toolUseInputDelta) of the model's stream events (modelStreamUpdateEvent), when the application's loop got it; end_unix_nano: the model's message stop event. A step's start_unix_nano is when the OpenAI client called fetch. The run: start ${appStart}, end ${appEnd} (unix ns). Spans: the SDK's Tracer on the global NodeTracerProvider (OTEL_SEMCONV_STABILITY_OPT_IN unset: gen_ai.system, not gen_ai.provider.name); it stamps no TTFT on any span.`,
});
