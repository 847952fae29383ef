// openinference-vercel: OpenInference's @arizeai/openinference-vercel, a span processor that rewrites
// the Vercel AI SDK's spans into OpenInference ones when they end (OpenInferenceSimpleSpanProcessor,
// src/OpenInferenceSpanProcessor.ts; TraceAggregateManager.onEnd calls utils.ts
// addOpenInferenceAttributesToSpan), in front of the capture's in-memory exporter. The spans are
// AI SDK 6's (npm alias ai6 = ai@6) streamText with experimental_telemetry, provider
// @ai-sdk/openai@3 (alias ai-sdk-openai3, Chat Completions) pointed at fakellm: the vercel6-text
// call, so the two fixtures differ only by the processor's rewriting. The processor declares the
// peer ai ^7 but loads nothing of the AI SDK: it reads span attributes only.
import common from '../lib/common.cjs';
import { OpenInferenceSimpleSpanProcessor } from '@arizeai/openinference-vercel';
import { streamText } from 'ai6';
import { createOpenAI } from 'ai-sdk-openai3';

const scenario = 'openinference-vercel';
const model = 'cap-openinference-vercel';
// Default options: no span filter (every span exported), reparentOrphanedSpans false,
// propagateContextAttributes true.
const { provider, exporter } = common.setupTracing(scenario, { processor: (exp) => new OpenInferenceSimpleSpanProcessor({ exporter: exp }) });

const fetches = [];
const openai = createOpenAI({ baseURL: `${common.fakellmURL()}/v1`, apiKey: common.DUMMY_API_KEY, fetch: common.recordingFetch(fetches) });

// The warm-up runs with telemetry, so that the processor's code is warm too, and its spans are
// dropped: warmed up without telemetry (as vercel6-text is), the captured call's spans started
// 34 ms after the call and its chunks reached the application 7 ms after the SDK timed them.
const warm = streamText({ model: openai.chat(model), prompt: 'Say hello.', maxOutputTokens: 5, experimental_telemetry: { isEnabled: true } });
for await (const _ of warm.textStream);
await provider.forceFlush();
exporter.reset();
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const timing = new common.Timing();
const result = streamText({
  model: openai.chat(model),
  prompt: 'Say hello.',
  maxOutputTokens: 20,
  experimental_telemetry: { isEnabled: true },
});
for await (const delta of result.textStream) {
  if (delta.length > 0) timing.chunk();
}
timing.finish();
const usage = await result.usage;
if (fetches.length !== 1) throw new Error(`expected one request, saw ${fetches.length}`);

await common.writeFixtures({
  scenario,
  instrumentation: '@arizeai/openinference-vercel (OpenInference JS) OpenInferenceSimpleSpanProcessor over ai 6 experimental_telemetry',
  packages: common.packageVersions(['@arizeai/openinference-vercel', '@arizeai/openinference-core', '@arizeai/openinference-genai', '@arizeai/openinference-semantic-conventions', 'ai6', 'ai-sdk-openai3', '@opentelemetry/sdk-trace-base']),
  model,
  provider,
  exporter,
  wallMinusPerf,
  requests: [{ timing, fetch: fetches[0], outputTokens: usage.outputTokens }],
  notes: 'The vercel6-text call (streamText over Chat Completions, stream_options.include_usage, experimental_telemetry: { isEnabled: true }) with OpenInferenceSimpleSpanProcessor({exporter}) as the span processor (default options). Package keys ai6 and ai-sdk-openai3 are npm aliases of ai@6 and @ai-sdk/openai@3. chunk_unix_nano: every non-empty textStream delta. fakellm sends its first SSE event (role, empty content) before prefill; response_headers_unix_nano is about when it arrived.',
});
