// langsmith-chain / langsmith-llm: LangChain JS traced by LangSmith in its OpenTelemetry mode
// (langsmith's LANGSMITH_OTEL_ENABLED=true with initializeOTEL from langsmith/experimental/otel/setup,
// given the capture's tracer provider). A streamed @langchain/openai ChatOpenAI (streaming: true,
// baseURL = fakellm) is called inside a langsmith `traceable` function:
//
//   langsmith-chain: prompt template | model | string parser, chain.stream(...);
//   langsmith-llm:   the model alone, model.stream(...);
//   langsmith-agent: a LangGraph (@langchain/langgraph) createReactAgent with tool count_words,
//                    agent.stream(..., {streamMode: 'messages'}); step 1's reply is turned into a
//                    tool call on the client (lib/rewrite.cjs, as in vercel7-agent), so the agent
//                    asks the model twice: the tool call, then text.
// (scenarios/langsmith-llm.mjs and langsmith-agent.mjs import this file, as mastra-chat does
// mastra-agent.)
//
// LangSmith JS makes no span of its own for a LangChain run: its translator
// (lib/experimental/otel/translator.js) writes each run's attributes on the OpenTelemetry span that
// was active when the run was created, and ends that span at the run's end time. Only `traceable`
// starts a span (traceable.js, maybeCreateOtelContext), so every run of the chain lands on the
// traceable's one span; without a traceable (or another active span) nothing is exported at all.
// The spans are exported as they are, through the capture's in-memory exporter (the LangSmith
// exporter only renames a few AI SDK attributes before sending them to LangSmith).
process.env.LANGSMITH_TRACING = 'true';
process.env.LANGSMITH_OTEL_ENABLED = 'true';
// Runs go to the translator only, never to LangSmith; the client still asks the endpoint for its
// server info: a closed loopback port, so that nothing leaves the machine.
process.env.LANGSMITH_ENDPOINT = 'http://127.0.0.1:9';
process.env.LANGSMITH_API_KEY = 'capture-dummy-key';

const path = await import('node:path');
const { fileURLToPath } = await import('node:url');
const common = (await import('../lib/common.cjs')).default;
const scenario = process.env.CAPTURE_SCENARIO || path.basename(fileURLToPath(import.meta.url), '.mjs');
const withChain = scenario === 'langsmith-chain';
const withAgent = scenario === 'langsmith-agent';
const model = `cap-${scenario}`;

const { provider, exporter } = common.setupTracing(scenario);
const { initializeOTEL } = await import('langsmith/experimental/otel/setup');
initializeOTEL({ globalTracerProvider: provider });
const { Client } = await import('langsmith');
const { traceable } = await import('langsmith/traceable');
const { LangChainTracer } = await import('@langchain/core/tracers/tracer_langchain');
const { ChatPromptTemplate } = await import('@langchain/core/prompts');
const { StringOutputParser } = await import('@langchain/core/output_parsers');
const { ChatOpenAI } = await import('@langchain/openai');
const { tool } = await import('@langchain/core/tools');
const { createReactAgent } = await import('@langchain/langgraph/prebuilt');
const { z } = await import('zod');
const rewrite = (await import('../lib/rewrite.cjs')).default;

// One client for the traceable and for LangChain's tracer, so that its pending batches can be
// awaited (the runs reach the translator from the client's batch queue, later than the call).
const client = new Client();
const tracer = new LangChainTracer({ client });

const fetches = [];
const recording = common.recordingFetch(fetches);
const llm = new ChatOpenAI({
  model,
  streaming: true,
  maxTokens: withAgent ? 12 : 20,
  apiKey: common.DUMMY_API_KEY,
  configuration: { baseURL: `${common.fakellmURL()}/v1`, fetch: withAgent ? rewrite.toolCallFetch(recording, 'count_words') : recording },
});
const countWords = tool(async ({ text }) => String(text.trim().split(/\s+/).length), {
  name: 'count_words',
  description: 'Counts the words of a text.',
  schema: z.object({ text: z.string() }),
});
let runnable = llm;
let input = 'Say hello.';
if (withChain) {
  runnable = ChatPromptTemplate.fromMessages([['human', '{question}']]).pipe(llm).pipe(new StringOutputParser());
  input = { question: 'Say hello.' };
} else if (withAgent) {
  runnable = createReactAgent({ llm, tools: [countWords] });
  input = { messages: [{ role: 'user', content: 'Say hello.' }] };
}

// run streams the runnable; steps gets one entry per model request: when a chunk arrives it
// belongs to the request last sent (fetches), whose Timing starts when fetch was called.
async function run(steps) {
  const opts = withAgent ? { callbacks: [tracer], streamMode: 'messages' } : { callbacks: [tracer] };
  for await (let chunk of await runnable.stream(input, opts)) {
    if (withAgent) chunk = chunk[0];
    let n = 0;
    if (typeof chunk === 'string') n = chunk.length;
    else if (chunk && chunk._getType && chunk._getType() === 'tool') n = 0;
    else if (chunk) n = (typeof chunk.content === 'string' ? chunk.content.length : 0) + (chunk.tool_call_chunks || []).reduce((m, c) => m + (c.args || '').length, 0);
    if (!steps) continue;
    const i = fetches.length - 1;
    while (steps.length <= i) steps.push({ timing: null, outputTokens: null, kinds: new Set() });
    const st = steps[i];
    if (!st.timing) { st.timing = new common.Timing(); st.timing.start = fetches[i].fetchStart; }
    if (n > 0) { st.timing.chunk(); st.kinds.add(typeof chunk === 'string' || (chunk.content && chunk.content.length) ? 'text' : 'tool-call'); st.timing.end = null; st.timing.finish(); }
    if (chunk && chunk.usage_metadata) st.outputTokens = chunk.usage_metadata.output_tokens;
  }
}
const app = traceable(run, { name: 'capture-app', client });

await common.warmup(() => app(null));
fetches.length = 0;
await client.awaitPendingTraceBatches();
await provider.forceFlush();
exporter.reset();
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const appStart = common.nowUnixNano();
const steps = [];
await app(steps);
const appEnd = common.nowUnixNano();
await client.awaitPendingTraceBatches();
const want = withAgent ? 2 : 1;
if (fetches.length !== want || steps.length !== want) throw new Error(`expected ${want} requests, got ${fetches.length} (${steps.length} with chunks)`);

await common.writeFixtures({
  scenario,
  instrumentation: 'langsmith OpenTelemetry mode (LANGSMITH_OTEL_ENABLED, initializeOTEL) around LangChain JS',
  packages: common.packageVersions(['langsmith', '@langchain/core', '@langchain/openai', ...(withAgent ? ['@langchain/langgraph'] : []), '@opentelemetry/sdk-trace-base']),
  model,
  provider,
  exporter,
  wallMinusPerf,
  requests: steps.map((st, i) => ({
    timing: st.timing,
    fetch: fetches[i],
    outputTokens: st.outputTokens,
    extra: withAgent ? { step: i + 1, chunk_kind: [...st.kinds].join(',') } : {},
  })),
  notes: `${withChain ? 'traceable(capture-app) around chain.stream: ChatPromptTemplate | ChatOpenAI (streaming) | StringOutputParser.' : withAgent ? 'traceable(capture-app) around a LangGraph createReactAgent (tool count_words) .stream(..., {streamMode: messages}); step 1 rewritten on the client into a streamed tool call (lib/rewrite.cjs).' : 'traceable(capture-app) around ChatOpenAI (streaming) .stream alone.'} The run: start ${appStart}, end ${appEnd} (unix ns). A request's start_unix_nano is when fetch was called, its end the last chunk. ChatOpenAI sends stream_options.include_usage (streamUsage). chunk_unix_nano: every non-empty chunk the application's loop got (strings from the parser; a message chunk's content, or its tool-call argument text, from the model), given to the request last sent. LangSmith writes the attributes of every LangChain run on the one span active when the run was created (the traceable's) and ends it at the first run's end that reaches its translator: the exported span is the traceable's, carrying that run's attributes.`,
});
