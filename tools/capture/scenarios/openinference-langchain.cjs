// openinference-langchain: OpenInference's @arizeai/openinference-instrumentation-langchain around a
// LangChain JS chain, ChatPromptTemplate | ChatOpenAI (@langchain/openai, streaming: true, baseURL
// = fakellm) | StringOutputParser, streamed with chain.stream(...).
//
// The instrumentation adds its own LangChain tracer (dist/src/tracer.js, LangChainTracer) to the
// handlers of every callback manager (it wraps CallbackManager._configureSync): one span per
// LangChain run, started when the run is created and ended with it, of the OpenInference kind of
// the run type (utils.js getOpenInferenceSpanKindFromRunType). It is CommonJS, so the scenario is
// too: manuallyInstrument patches the CommonJS callback manager that @langchain/openai's CommonJS
// build uses (the require hook's target, @langchain/core/dist/callbacks/manager.cjs, is an internal
// file; manuallyInstrument is the package's documented way and patches the same module).
const common = require('../lib/common.cjs');
const { chatChain, streamChain } = require('../lib/langchain-chain.cjs');

const scenario = 'openinference-langchain';
const model = 'cap-openinference-langchain';

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  const { LangChainInstrumentation } = require('@arizeai/openinference-instrumentation-langchain');
  const instrumentation = new LangChainInstrumentation({ tracerProvider: provider });
  instrumentation.manuallyInstrument(require('@langchain/core/callbacks/manager'));
  const { ChatPromptTemplate } = require('@langchain/core/prompts');
  const { StringOutputParser } = require('@langchain/core/output_parsers');
  const { BaseCallbackHandler } = require('@langchain/core/callbacks/base');
  const { awaitAllCallbacks } = require('@langchain/core/callbacks/promises');
  const { ChatOpenAI } = require('@langchain/openai');

  const fetches = [];
  const chain = chatChain({ ChatOpenAI, ChatPromptTemplate, StringOutputParser }, model, fetches);

  // The usage the stream reported, as LangChain gave it to the model run's end (the chain yields
  // strings, which carry none).
  let outputTokens = null;
  const usage = BaseCallbackHandler.fromMethods({
    handleLLMEnd(output) {
      const msg = output.generations && output.generations[0] && output.generations[0][0] && output.generations[0][0].message;
      if (msg && msg.usage_metadata) outputTokens = msg.usage_metadata.output_tokens;
    },
  });

  const run = () => streamChain(chain, { callbacks: [usage] });

  // The warm-up runs traced and its spans are dropped: run under common.warmup's suppressed
  // context, it left LangChain's background callback queue in that context, and the first run
  // callback of the captured call (the chain's) then ran suppressed too: no span for the
  // RunnableSequence, and its children became roots of three traces.
  await run();
  await awaitAllCallbacks();
  await provider.forceFlush();
  exporter.reset();
  fetches.length = 0;
  outputTokens = null;

  const wallMinusPerf = common.wallMinusPerfMs();
  const timing = await run();
  await awaitAllCallbacks(); // the runs end in LangChain's background callback queue
  if (fetches.length !== 1) throw new Error(`expected one request, saw ${fetches.length}`);
  await common.writeFixtures({
    scenario,
    instrumentation: '@arizeai/openinference-instrumentation-langchain (OpenInference JS) around LangChain JS',
    packages: common.packageVersions(['@arizeai/openinference-instrumentation-langchain', '@arizeai/openinference-core', '@arizeai/openinference-semantic-conventions', '@langchain/core', '@langchain/openai', '@opentelemetry/sdk-trace-base']),
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [{ timing, fetch: fetches[0], outputTokens }],
    notes: 'LangChainInstrumentation (default config, manuallyInstrument on @langchain/core/callbacks/manager) around chain.stream: ChatPromptTemplate | ChatOpenAI (streaming, maxTokens 20; it sends stream_options.include_usage) | StringOutputParser. chunk_unix_nano: every non-empty string the chain yielded, when the application\'s loop got it. output_tokens: the usage_metadata of the model run\'s message (handleLLMEnd). fakellm sends a first SSE event (role, empty content) at once, before prefill; response_headers_unix_nano is about when it came.',
  });
}

main().catch((e) => { console.error(e); process.exit(1); });
