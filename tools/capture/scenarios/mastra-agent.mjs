// mastra-agent / mastra-chat: a Mastra agent (@mastra/core) streamed with agent.stream, traced by
// @mastra/observability and exported as OpenTelemetry spans by @mastra/otel-exporter's OtelExporter
// (its `exporter` option takes any OTel SpanExporter: here the in-memory one of lib/common.cjs).
// The model is @ai-sdk/openai's Chat Completions model pointed at fakellm.
//
//   mastra-agent: a tool (count_words) and maxSteps 3; step 1's reply is turned into a tool call
//     on the client (lib/rewrite.cjs, as in vercel7-agent), so the agent calls the model twice:
//     step 1 the tool call, step 2 the text.
//   mastra-chat: the same agent without tools: one streamed call (the file is the same; the
//     scenario is the name it is run as, scenarios/mastra-chat.mjs imports this one).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import common from '../lib/common.cjs';
import rewrite from '../lib/rewrite.cjs';
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';

const scenario = process.env.CAPTURE_SCENARIO || path.basename(fileURLToPath(import.meta.url), '.mjs');
const withTool = scenario === 'mastra-agent';
const model = `cap-${scenario}`;

const exporter = new InMemorySpanExporter();
const otel = new OtelExporter({
  // The provider config is required; the endpoint is never used, since `exporter` replaces the
  // OTLP exporter it would make.
  provider: { custom: { endpoint: 'http://127.0.0.1:9/v1/traces', protocol: 'http/json' } },
  exporter,
  signals: { logs: false },
  resourceAttributes: { 'otelitl.capture.scenario': scenario },
});
const observability = new Observability({
  configs: { otel: { serviceName: 'otelitl-capture', exporters: [otel] } },
});

const fetches = [];
const recording = common.recordingFetch(fetches);
const openai = createOpenAI({
  baseURL: `${common.fakellmURL()}/v1`,
  apiKey: common.DUMMY_API_KEY,
  fetch: withTool ? rewrite.toolCallFetch(recording, 'count_words') : recording,
});
const countWords = createTool({
  id: 'count_words',
  description: 'Counts the words of a text.',
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ words: text.trim().split(/\s+/).length }),
});
const agent = new Agent({
  id: 'capture-agent',
  name: 'capture-agent',
  instructions: 'You are a test agent.',
  model: openai.chat(model),
  ...(withTool ? { tools: { count_words: countWords } } : {}),
});
const mastra = new Mastra({ agents: { captureAgent: agent }, observability, logger: false });
const theAgent = mastra.getAgent('captureAgent');
const maxOutputTokens = withTool ? 12 : 20;

async function run(maxTokens) {
  const steps = [];
  let cur = null;
  const kinds = new Map();
  const out = await theAgent.stream('Say hello.', { maxSteps: 3, modelSettings: { maxOutputTokens: maxTokens } });
  for await (const part of out.fullStream) {
    kinds.set(part.type, (kinds.get(part.type) || 0) + 1);
    const p = part.payload || {};
    switch (part.type) {
      case 'step-start':
        cur = { timing: new common.Timing(), kinds: [] };
        steps.push(cur);
        break;
      case 'text-delta':
        if (p.text && p.text.length > 0) { cur.timing.chunk(); cur.kinds.push('text-delta'); }
        break;
      case 'tool-call-delta':
        if (p.argsTextDelta && p.argsTextDelta.length > 0) { cur.timing.chunk(); cur.kinds.push('tool-call-delta'); }
        break;
      case 'step-finish':
        cur.timing.finish();
        cur.outputTokens = p.output && p.output.usage ? p.output.usage.outputTokens : null;
        cur.finishReason = p.stepResult ? p.stepResult.reason : null;
        break;
      case 'error':
        throw p.error || new Error('stream error');
    }
  }
  if (process.env.CAPTURE_DEBUG) console.error('parts:', JSON.stringify([...kinds]));
  return { steps, totalUsage: await out.totalUsage };
}

// The spans reach the exporter through Mastra's observability bus and the OtelExporter's
// BatchSpanProcessor: flush both. (Not mastra.shutdown(): it shuts the InMemorySpanExporter down,
// which drops what it holds.)
async function flushSpans() {
  await observability.getDefaultInstance().flush();
  await otel.flush();
}

// Mastra's tracing does not go through the OpenTelemetry context, so the warm-up's spans are not
// suppressed: they are flushed and dropped.
await common.warmup(() => run(5));
await flushSpans();
exporter.reset();
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const appStart = common.nowUnixNano();
const { steps, totalUsage } = await run(maxOutputTokens);
const appEnd = common.nowUnixNano();
const want = withTool ? 2 : 1;
if (steps.length !== want || fetches.length !== want) throw new Error(`expected ${want} steps and ${want} requests, got ${steps.length} and ${fetches.length}`);

const provider = { forceFlush: flushSpans, shutdown: () => mastra.shutdown() };
await common.writeFixtures({
  scenario,
  instrumentation: '@mastra/observability + @mastra/otel-exporter OtelExporter (Mastra Agent.stream)',
  packages: common.packageVersions(['@mastra/core', '@mastra/observability', '@mastra/otel-exporter', '@ai-sdk/openai', 'zod', '@opentelemetry/sdk-trace-base']),
  model,
  provider,
  exporter,
  wallMinusPerf,
  // As in vercel7-agent: the step-start part reaches the application after the fetch.
  requests: common.agentStepRequests(steps, fetches, 'start_step_part_unix_nano', { withExtra: withTool }),
  notes: `${withTool ? `Mastra Agent with tool count_words, agent.stream(prompt, {maxSteps: 3, modelSettings: {maxOutputTokens: 12}}). Step 1's streamed text is rewritten on the client into a streamed tool call (lib/rewrite.cjs, as in vercel7-agent), so step 1 counts tool-call deltas as chunks and step 2 text deltas.` : 'Mastra Agent without tools, agent.stream(prompt, {maxSteps: 3, modelSettings: {maxOutputTokens: 20}}): one streamed Chat Completions call.'} Model: @ai-sdk/openai .chat() against fakellm (it sends stream_options.include_usage). chunk_unix_nano: every non-empty text-delta (or tool-call-delta) part of fullStream, when the application's loop got it. A step's start_unix_nano is when the SDK called fetch; start_step_part_unix_nano is when its step-start part reached the application. The run: start ${appStart}, end ${appEnd} (unix ns); total usage: input ${totalUsage && totalUsage.inputTokens}, output ${totalUsage && totalUsage.outputTokens}. Spans: exported by OtelExporter (config.exporter = an InMemorySpanExporter) with Mastra's own resource (service.name from the observability config); Mastra stamps span times from Date (whole ms).`,
});
