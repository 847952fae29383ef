// openllmetry-langchain-openai: the chain of openllmetry-langchain (prompt template | ChatOpenAI |
// string parser, chain.stream) with OpenLLMetry's LangChain and OpenAI instrumentations both
// registered, as @traceloop/node-server-sdk's initialize registers them, in a CommonJS
// application whose ChatOpenAI is @langchain/openai 1.5.8 (the npm workspace langchain-openai6/),
// the last release on openai 6 (the tree's 6.49.0), which the OpenAI instrumentation hooks when it
// is loaded with require. Each instrumentation writes a model call for the one request: the
// LangChain one "chat {model}" for the model run, the OpenAI one "chat {model}" for the openai
// call.
const common = require('../lib/common.cjs');
const { chatChain, streamChain } = require('../lib/langchain-chain.cjs');

const scenario = 'openllmetry-langchain-openai';
const model = `cap-${scenario}`;

async function main() {
  const { provider, exporter } = common.setupTracing(scenario);
  const { OpenAIInstrumentation } = require('@traceloop/instrumentation-openai');
  const { LangChainInstrumentation } = require('@traceloop/instrumentation-langchain');
  const openaiInstrumentation = new OpenAIInstrumentation({ exceptionLogger: (e) => console.error('instrumentation exception:', e) });
  openaiInstrumentation.setTracerProvider(provider);
  openaiInstrumentation.enable();
  // Its constructor patches the CommonJS callback manager, the one a CommonJS application uses.
  const langchainInstrumentation = new LangChainInstrumentation({ exceptionLogger: (e) => console.error('instrumentation exception:', e) });
  langchainInstrumentation.setTracerProvider(provider);
  langchainInstrumentation.enable();
  const { ChatPromptTemplate } = require('@langchain/core/prompts');
  const { StringOutputParser } = require('@langchain/core/output_parsers');
  const lc = require('otelitl-capture-langchain-openai6');

  const fetches = [];
  const chain = chatChain({ ChatOpenAI: lc.ChatOpenAI, ChatPromptTemplate, StringOutputParser }, model, fetches);
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
    instrumentation: '@traceloop/instrumentation-langchain and @traceloop/instrumentation-openai (OpenLLMetry JS), both on one request',
    packages: { ...common.packageVersions(['@traceloop/instrumentation-langchain', '@traceloop/instrumentation-openai', '@traceloop/ai-semantic-conventions', '@langchain/core', 'openai']), '@langchain/openai (its workspace)': lc.version('@langchain/openai'), ...common.packageVersions(['@opentelemetry/sdk-trace-base']) },
    model,
    provider,
    exporter,
    wallMinusPerf,
    requests: [{ timing, fetch: fetches[0], outputTokens: null }],
    notes: 'A CommonJS application: chain.stream({question}) of ChatPromptTemplate | ChatOpenAI (@langchain/openai 1.5.8 on openai 6.49.0, streaming, max 20 tokens) | StringOutputParser. chunk_unix_nano: every non-empty string the parser yielded, when the application\'s loop got it; output_tokens null (the parser yields strings). ChatOpenAI sends stream_options.include_usage (streamUsage). LangChainInstrumentation and OpenAIInstrumentation with their default config (traceContent on).',
  });
}

main().catch((e) => { console.error(e); process.exit(1); });
