// openllmetry-langchain: OpenLLMetry's @traceloop/instrumentation-langchain around a LangChain JS
// chain, prompt template | ChatOpenAI (@langchain/openai, streaming: true, baseURL = fakellm) |
// string parser, run with chain.stream(...). @traceloop/instrumentation-openai is registered too,
// before anything loads openai, as @traceloop/node-server-sdk's initialize registers every
// instrumentation it has: it hooks openai >=4 <7 only, and ChatOpenAI 1.6 loads its own openai
// 7.59.0, so it writes no span here (see README.md).
//
// The LangChain instrumentation adds a callback handler to every CallbackManager
// (@langchain/core/callbacks/manager, CallbackManager._configureSync): one span per chain run
// ("workflow {name}"), per tool run ("execute_tool {name}") and per model run ("chat {model}"). Its
// constructor patches the CommonJS module at once and the ESM one after a dynamic import; the
// scenario patches the ESM module itself with manuallyInstrument, as the package's README says to
// for ESM, so that no timing decides whether the captured run is traced.
const path = await import('node:path');
const { fileURLToPath } = await import('node:url');
const common = (await import('../lib/common.cjs')).default;
const { chatChain, streamChain } = (await import('../lib/langchain-chain.cjs')).default;
const scenario = path.basename(fileURLToPath(import.meta.url), '.mjs');
const model = `cap-${scenario}`;

const { provider, exporter } = common.setupTracing(scenario);
const { OpenAIInstrumentation } = (await import('@traceloop/instrumentation-openai')).default;
const { LangChainInstrumentation } = (await import('@traceloop/instrumentation-langchain')).default;
const openaiInstrumentation = new OpenAIInstrumentation({ exceptionLogger: (e) => console.error('instrumentation exception:', e) });
openaiInstrumentation.setTracerProvider(provider);
openaiInstrumentation.enable();
const langchainInstrumentation = new LangChainInstrumentation({ exceptionLogger: (e) => console.error('instrumentation exception:', e) });
langchainInstrumentation.setTracerProvider(provider);
langchainInstrumentation.enable();
langchainInstrumentation.manuallyInstrument({ callbackManagerModule: await import('@langchain/core/callbacks/manager') });

const { ChatPromptTemplate } = await import('@langchain/core/prompts');
const { StringOutputParser } = await import('@langchain/core/output_parsers');
const { ChatOpenAI } = await import('@langchain/openai');

const fetches = [];
const chain = chatChain({ ChatOpenAI, ChatPromptTemplate, StringOutputParser }, model, fetches);
const run = () => streamChain(chain);

await common.warmup(run);
await provider.forceFlush();
exporter.reset();
fetches.length = 0;

const wallMinusPerf = common.wallMinusPerfMs();
const timing = await run();
if (fetches.length !== 1) throw new Error(`expected one request, saw ${fetches.length}`);
// The callback handler ends its spans in async handlers: give them a moment.
await new Promise((r) => setTimeout(r, 100));

await common.writeFixtures({
  scenario,
  instrumentation: '@traceloop/instrumentation-langchain (OpenLLMetry JS), with @traceloop/instrumentation-openai registered too',
  packages: common.packageVersions(['@traceloop/instrumentation-langchain', '@traceloop/instrumentation-openai', '@traceloop/ai-semantic-conventions', '@langchain/core', '@langchain/openai', '@opentelemetry/sdk-trace-base']),
  model,
  provider,
  exporter,
  wallMinusPerf,
  requests: [{ timing, fetch: fetches[0], outputTokens: null }],
  notes: 'chain.stream({question}) of ChatPromptTemplate | ChatOpenAI (streaming, max 20 tokens) | StringOutputParser. chunk_unix_nano: every non-empty string the parser yielded, when the application\'s loop got it; output_tokens null (the parser yields strings). ChatOpenAI sends stream_options.include_usage (streamUsage). LangChainInstrumentation and OpenAIInstrumentation with their default config (traceContent on), the ESM callback manager patched with manuallyInstrument.',
});
