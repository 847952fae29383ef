package itlconv

// Names other instrumentations write, which the otelitl collector components read and normalise to
// the GenAI semantic conventions. Each group says which instrumentation writes it, in which
// versions, and the source file it was learned from (see docs/sources.md and
// tools/capture/README.md in the repository for the details, and testdata/captured and
// testdata/written for spans of each).

// Semantic-convention names used as span attributes although the conventions define them as
// metrics (Vercel AI SDK 7's @ai-sdk/otel OpenTelemetry integration, src/open-telemetry.ts
// getGenAIClientPerformanceAttributes; Pydantic AI >= 2.6.0, pydantic_ai/_instrumentation.py
// open_model_request_span; OpenLIT writes the server ones on CLIENT spans,
// sdk/python/src/openlit/__helpers.py common_span_attributes, py-1.33.9 and later, and its JS SDK).
const (
	// ClientTimeToFirstChunkKey holds a time to first chunk in seconds.
	ClientTimeToFirstChunkKey = "gen_ai.client.operation.time_to_first_chunk"
	// ClientTimePerOutputChunkKey holds the MEAN gap between chunks in seconds: not a gap.
	ClientTimePerOutputChunkKey = "gen_ai.client.operation.time_per_output_chunk"
	// ServerTimeToFirstTokenKey holds a time to first token in seconds. OpenLIT measures it from
	// when the stream object was returned (after the response headers), not from the span start.
	ServerTimeToFirstTokenKey = "gen_ai.server.time_to_first_token"
	// ServerTimePerOutputTokenKey holds OpenLIT's MEAN gap between chunks in seconds: not a gap.
	ServerTimePerOutputTokenKey = "gen_ai.server.time_per_output_token"
)

// Flags that say a request was not streamed, false on a span whose call returned whole. OpenLIT
// then writes the whole request's duration as gen_ai.server.time_to_first_token (py,
// process_chat_response; gen_ai.request.is_stream before gen_ai.request.stream); OpenLLMetry
// writes gen_ai.is_streaming and llm.is_streaming. A span so flagged has no time to first chunk but
// from a timeline: a reply that arrived whole has no first chunk to wait for.
const (
	RequestStreamKey   = "gen_ai.request.stream" // the semantic conventions' name
	RequestIsStreamKey = "gen_ai.request.is_stream"
	IsStreamingKey     = "gen_ai.is_streaming"
	LLMIsStreamingKey  = "llm.is_streaming"
)

// Deprecated semantic-convention names still written: gen_ai.system (replaced by
// gen_ai.provider.name in v1.37.0; OpenLLMetry <= 0.54, OpenLIT < py-1.36.9, the Vercel AI SDK's
// legacy telemetry, Pydantic AI beside the new name), and the usage names before
// gen_ai.usage.input_tokens/output_tokens (vLLM; OpenLLMetry <= 0.47).
const (
	SystemKey           = "gen_ai.system"
	UsagePromptKey      = "gen_ai.usage.prompt_tokens"
	UsageCompletionKey  = "gen_ai.usage.completion_tokens"
	OpenLLMetryTypeKey  = "llm.request.type" // OpenLLMetry <= 0.54: "chat" or "completion"
	OpenLLMetryChatType = "chat"
)

// OpenLLMetry JS (traceloop/openllmetry-js). Its LangChain instrumentation
// (@traceloop/instrumentation-langchain 0.27.0, dist/index.js, TraceloopCallbackHandler, added to
// every LangChain CallbackManager) writes one span per LangChain run, each started as a root of
// its own (none is made the active span): "chat {model}" (CLIENT, gen_ai.operation.name chat,
// gen_ai.provider.name guessed from the model's class, usage from the run's llmOutput) per model
// run; "execute_tool {name}" per tool run; and per chain run, a RunnableSequence, a prompt template
// or an output parser alike, "workflow {name}" (INTERNAL) with gen_ai.operation.name "workflow"
// (its own name, no convention's; invoke_agent for a class named like an agent or executor),
// gen_ai.provider.name "langchain" and traceloop.span.kind "workflow" (handleChainStart).
// traceloop.span.kind is OpenLLMetry's own marker of the spans that wrap model calls: its
// decorators' (withWorkflow, withTask, withAgent, withTool in @traceloop/node-server-sdk; @workflow,
// @task, @agent, @tool in Python, TraceloopSpanKindValues) and its framework instrumentations'
// chain and tool spans ("task" on LangChain's tool runs); its model calls never carry it. So a
// span whose traceloop.span.kind is one of OpenLLMetryNoModelCallKinds is no model call, whatever
// its operation.
const OpenLLMetrySpanKindKey = "traceloop.span.kind"

// OpenLLMetryNoModelCallKinds are the traceloop.span.kind values of OpenLLMetry's spans that send
// no request to a model (see OpenLLMetrySpanKindKey).
var OpenLLMetryNoModelCallKinds = []string{"workflow", "task", "agent", "tool"}

// The Vercel AI SDK's own telemetry: ai@3.3.11 to 6.x (packages/ai/src/generate-text/
// stream-text.ts and generate-object/stream-object.ts), and ai@7 with @ai-sdk/otel's
// LegacyOpenTelemetry integration (packages/otel/src/legacy-open-telemetry.ts). The model call is
// the span whose ai.operationId ends in ".doStream" or ".doGenerate"; its parent ("ai.streamText")
// wraps it and repeats its usage.
const (
	VercelOperationIDKey = "ai.operationId"
	// VercelStreamSuffix and VercelGenerateSuffix end the ai.operationId of a model call.
	VercelStreamSuffix   = ".doStream"
	VercelGenerateSuffix = ".doGenerate"
	// VercelMsToFirstChunkKey (streamText) and VercelStreamMsToFirstChunkKey (streamObject) hold a
	// time to first chunk in MILLISECONDS. The ai.stream.firstChunk event beside them is stamped at
	// the step's end by the ai@7 legacy integration: its time means nothing there, so it is never read.
	VercelMsToFirstChunkKey       = "ai.response.msToFirstChunk"
	VercelStreamMsToFirstChunkKey = "ai.stream.msToFirstChunk"
	// VercelMsToFinishKey holds the time to the finish chunk in milliseconds.
	VercelMsToFinishKey = "ai.response.msToFinish"
	// VercelAvgOutputTokensPerSecondKey is a RATE over the whole call, first chunk included: not a gap.
	VercelAvgOutputTokensPerSecondKey = "ai.response.avgOutputTokensPerSecond"
	VercelModelIDKey                  = "ai.model.id"
	// VercelModelProviderKey is the AI SDK's provider id, such as "openai.chat" or
	// "anthropic.messages"; the same value appears as gen_ai.system or gen_ai.provider.name.
	VercelModelProviderKey    = "ai.model.provider"
	VercelOutputTokensKey     = "ai.usage.outputTokens"     // ai@5 and later
	VercelInputTokensKey      = "ai.usage.inputTokens"      // ai@5 and later
	VercelCompletionTokensKey = "ai.usage.completionTokens" // ai@3, ai@4
	VercelPromptTokensKey     = "ai.usage.promptTokens"     // ai@3, ai@4
	// VercelFirstChunkEventName is never read (see VercelMsToFirstChunkKey).
	VercelFirstChunkEventName = "ai.stream.firstChunk"
	VercelAgentStepOperation  = "agent_step" // @ai-sdk/otel's step spans between invoke_agent and chat
)

// OpenInference (Arize-ai/openinference, spec/semantic_conventions.md). The model call is the span
// with openinference.span.kind = LLM. Its Python OpenAI, MistralAI and LlamaIndex instrumentations
// add a "First Token Stream Event" event at the first chunk (python/instrumentation/
// openinference-instrumentation-openai/src/openinference/instrumentation/openai/_stream.py); the
// JavaScript ones do not.
//
// The JavaScript instrumentations (npm, captured in testdata/captured/openinference-*) write no
// time to first chunk at all. @arizeai/openinference-instrumentation-openai 4.2.7 and
// -anthropic 0.2.8 (dist/src/instrumentation.js) make one LLM span per call.
// @arizeai/openinference-instrumentation-langchain 4.1.1 makes one span per LangChain run, of the
// run type's kind (dist/src/utils.js getOpenInferenceSpanKindFromRunType: llm is LLM, prompt
// PROMPT, a chain or parser CHAIN), so only a model's run is a model call; it writes no
// llm.provider or llm.system (LangChain's ls_provider is only in its metadata JSON), and exports
// none of a run's new_token events. @arizeai/openinference-vercel 3.2.1 is a span processor that
// adds OpenInference attributes to the Vercel AI SDK's own spans as they end; its
// src/constants.ts VercelSDKFunctionNameToSpanKindMap marks the wrapper AGENT and the provider call
// LLM:
//
//	["ai.streamText", OpenInferenceSpanKind.AGENT],
//	["ai.streamText.doStream", OpenInferenceSpanKind.LLM],
//
// (CHAIN, not AGENT, for the wrappers in earlier versions), so the AI SDK's model call is counted
// once, under either rule, with the SDK's ai.* attributes, which the processor keeps.
const (
	OpenInferenceSpanKindKey     = "openinference.span.kind"
	OpenInferenceLLMKind         = "LLM"
	OpenInferenceModelKey        = "llm.model_name"
	OpenInferenceProviderKey     = "llm.provider" // the hosting provider: openai, azure, google, aws, ...
	OpenInferenceSystemKey       = "llm.system"   // the AI product: openai, anthropic, vertexai, ...
	OpenInferenceOutputTokensKey = "llm.token_count.completion"
	OpenInferenceInputTokensKey  = "llm.token_count.prompt"
	OpenInferenceFirstTokenEvent = "First Token Stream Event"
)

// Langfuse's OpenTelemetry-based SDKs: JS v4 and v5 (packages/core/src/constants.ts,
// packages/tracing/src/attributes.ts), Python v3 and v4 (langfuse/_client/attributes.py). The
// model call is the observation of type "generation". The completion start time is an absolute
// ISO 8601 time, JSON-quoted ("\"2026-11-30T04:12:28.609Z\""), millisecond precision in JS and
// microsecond in Python; the JS OpenAI integration takes it at the first streamed event of any
// kind, which may come with the response headers, before the first token.
const (
	LangfuseTypeKey                = "langfuse.observation.type"
	LangfuseGenerationType         = "generation"
	LangfuseModelKey               = "langfuse.observation.model.name"
	LangfuseCompletionStartTimeKey = "langfuse.observation.completion_start_time"
	// LangfuseUsageDetailsKey is a JSON object as a string: {"input":..,"output":..} (JS, and
	// Python's LangChain handler) or OpenAI's usage passed through (Python's OpenAI integration:
	// "prompt_tokens", "completion_tokens").
	LangfuseUsageDetailsKey = "langfuse.observation.usage_details"
)

// LangSmith (langchain-ai/langsmith-sdk, JS, the npm package langsmith; Python below) in its
// OpenTelemetry mode (LANGSMITH_OTEL_ENABLED=true or LANGSMITH_TRACING_MODE=otel, with
// initializeOTEL from langsmith/experimental/otel/setup): its translator (langsmith 0.12.0,
// lib/experimental/otel/translator.js, setSpanAttributes) writes every LangChain or LangGraph run
// it gets as langsmith.span.kind (the run type: llm, chain, tool, retriever, embedding, prompt,
// parser, ...) and gen_ai.operation.name by WELL_KNOWN_OPERATION_NAMES: llm -> chat, tool ->
// execute_tool, retriever -> embeddings, embedding -> embeddings, prompt -> chat, any other type
// -> the type itself. A prompt template and a retriever thus read as chat and embeddings although
// no model is asked. So a span with langsmith.span.kind is a model call only when the kind is one
// of LangSmithModelCallKinds. The translator makes no span of its own: it writes a run on the span
// that was active when the run was created (createSpanForRun, client.js _cloneCurrentOTELContext),
// the span of a `traceable` or the application's, and ends that span at the run's end; the
// runs of a chain all land on one span, which keeps the attributes of the first run to end.
//
// The provider is the run's metadata ls_provider (LangChain's id, "openai" for ChatOpenAI),
// exported as langsmith.metadata.ls_provider: gen_ai.system is guessed from the model's name
// (setGenAiSystem) and is "langchain" for a name it does not know. Each LangChain chat model class
// sets ls_provider in getLsParams; read in the npm packages' dist files: "openai"
// (@langchain/openai 1.6.0 dist/chat_models/base.js; ChatDeepSeek of @langchain/deepseek 1.1.13
// inherits it), "azure" (dist/azure/chat_models/index.js), "anthropic" (@langchain/anthropic
// 1.5.11 dist/chat_models.js), "google_vertexai" (@langchain/google-common 2.3.2
// dist/chat_models.js, under ChatVertexAI of @langchain/google-vertexai and ChatGoogle of
// @langchain/google-gauth 2.3.2, whichever platform they reach), "google_genai"
// (@langchain/google-genai 2.3.2 dist/chat_models.js), "amazon_bedrock" (@langchain/aws 1.4.5
// dist/chat_models.js), "mistral" (@langchain/mistralai 1.2.0), "groq" (@langchain/groq 1.3.1),
// "cohere" (@langchain/cohere 1.0.5), "xai" (@langchain/xai 1.4.15 dist/chat_models/completions.js
// and responses.js), "ollama" (@langchain/ollama 1.3.0), "cerebras" (@langchain/cerebras 1.0.4),
// and in @langchain/community 1.1.29 dist/chat_models: "bedrock" (bedrock/web.js BedrockChat),
// "watsonx" (ibm.js), "fireworks", "together" (togetherai.js), "novita", and "Perplexity"
// (perplexity.js sets none: @langchain/core 1.4.0 dist/language_models/chat_models.js
// getLsParams writes the class name less "Chat"). LangSmith Python's Google ADK integration
// writes "google_ai" or "google_vertexai" (integrations/google_adk/_client.py _get_ls_provider),
// its wrappers "openai", "azure", "anthropic" and "google" (wrappers/_openai.py, _anthropic.py,
// _gemini.py). The Python langchain-* packages write "google_vertexai", "google_genai",
// "amazon_bedrock", "mistral", "azure" and "deepseek" (ChatDeepSeek's own; seen in Python
// source in a public code index, not in an installed package); the others were not seen. On a
// span with langsmith.span.kind, an ls_provider of LangChain's spelling is read as the
// conventions' name (gcp.vertex_ai, gcp.gemini, aws.bedrock, azure.ai.openai, mistral_ai, x_ai,
// ibm.watsonx.ai, perplexity; "google" as gcp.gen_ai); ollama, fireworks, together, cerebras and
// novita have none and stay as written. Usage is
// langsmith.usage_metadata, a JSON object as a string ({"input_tokens":..,"output_tokens":..}):
// the translator writes gen_ai.usage.* only when it finds usage_metadata under a message's
// kwargs (getUnifiedRunTokens), which a LangChain JS run's outputs hold as class instances, not
// serialised, so a streamed ChatOpenAI call had none. No timing: no first-token time, and no
// events (a run's new_token events are not exported).
//
// LangSmith Python (langsmith-sdk bc8dd672, python/langsmith 0.11.1) in the same mode
// (LANGSMITH_OTEL_ENABLED=true; python/langsmith/_internal/otel/_otel_exporter.py OTELExporter)
// makes one span per run, unlike JS: a run's post starts a span (the run's name, its start_time,
// the parent run's span as parent), its patch ends it at the run's end_time. It writes the same
// langsmith.span.kind and WELL_KNOWN_OPERATION_NAMES, gen_ai.system by a like guess ("langchain",
// "gemini", "vertex_ai", "az.ai.openai", ...), every metadata key as langsmith.metadata.<key>
// (ls_provider among them; a dict as a JSON string), and gen_ai.usage.* from the outputs'
// usage_metadata, which LangChain Python serialises (dumpd), so a LangChain model run has its
// tokens there. It writes no events and no first_token_time (a field of the runs LangSmith's API
// returns): a LangChain run's new_token events are dropped, so no TTFT. Its Google ADK
// integration (python/langsmith/integrations/google_adk/_client.py wrap_flow_call_llm_async)
// writes on its llm run the metadata time_to_first_token, the seconds from the run's start (the
// span's) to ADK's first partial event (SSE streaming only), and usage_metadata: read as
// LangSmithTimeToFirstTokenKey (on a span with langsmith.span.kind) and LangSmithMetadataUsageKey
// (when LangSmithUsageKey, JS's copy of it, is absent).
const (
	LangSmithSpanKindKey         = "langsmith.span.kind"
	LangSmithProviderKey         = "langsmith.metadata.ls_provider"
	LangSmithUsageKey            = "langsmith.usage_metadata"
	LangSmithMetadataUsageKey    = "langsmith.metadata.usage_metadata"
	LangSmithTimeToFirstTokenKey = "langsmith.metadata.time_to_first_token"
)

// LangSmithModelCallKinds are the langsmith.span.kind values (LangSmith run types) of a request to
// a model (see LangSmithSpanKindKey).
var LangSmithModelCallKinds = []string{"llm", "embedding"}

// Mastra (mastra-ai/mastra, TypeScript agents): @mastra/observability traces and
// @mastra/otel-exporter exports every span of a run with gen_ai.operation.name and
// mastra.span.type (otel-exporter 1.4.0, src/gen-ai-semantics.ts getAttributes). The operation is
// "chat" on the span the exporter takes for the provider request (isModelCallSpan: MODEL_INFERENCE
// when @mastra/core and @mastra/observability both have the model-inference-span feature, as core
// 1.71.0 and observability 1.17.9 do, else MODEL_GENERATION) and "embeddings" on RAG_EMBEDDING;
// on the others it is invoke_agent, agent_step, execute_tool, invoke_workflow or the span type in
// lower case (getOperationName): model_generation above the steps, model_chunk once per text or
// tool-call part of a reply, workflow and processor spans. So a span with mastra.span.type is a
// model call only under the operations of MastraModelCallOperations.
//
// The completion start time is an ISO 8601 time, unquoted, millisecond precision
// (Date.toISOString()): when the first text, tool-call or reasoning delta of the GENERATION came
// (@mastra/observability 1.17.9, ModelSpanTracker #captureCompletionStartTime, taken once per
// generation). Every MODEL_INFERENCE span of the generation carries that same time: on the
// second and later steps of an agent (after a tool call) it is the first step's, before the span
// starts, and gives that step no time to first chunk (nor is it malformed).
const (
	MastraSpanTypeKey            = "mastra.span.type"
	MastraCompletionStartTimeKey = "mastra.completion_start_time"
)

// MastraModelCallOperations are the gen_ai.operation.name values of Mastra spans that stand for a
// request to a model (see MastraSpanTypeKey).
var MastraModelCallOperations = []string{"chat", "embeddings"}

// Strands Agents (strands-agents/sdk-typescript, npm @strands-agents/sdk; 1.19.0 read in
// dist/src/telemetry/tracer.js, class Tracer). Every span it starts gets gen_ai.event.start_time
// (_startSpan: new Date().toISOString()), and gen_ai.event.end_time when it ends; the Python SDK
// (strands-agents/sdk-python, src/strands/telemetry/tracer.py _start_span) writes the same key.
// gen_ai.operation.name is "chat" on the span of one provider request (startModelInvokeSpan,
// INTERNAL, named "chat"; a memory extractor's model call gets one too), invoke_agent,
// execute_tool, invoke_graph or invoke_swarm (startMultiAgentSpan: `invoke_${orchestratorType}`)
// and execute_node (startNodeSpan) above it, these two with the usage of the calls below them,
// and memory.search, memory.add, memory.inject, memory.extract on memory spans; the agent loop's
// execute_agent_loop_cycle spans have none. So a span with gen_ai.event.start_time is a model
// call only under the operations of StrandsModelCallOperations.
//
// Its gen_ai.system (gen_ai.provider.name with OTEL_SEMCONV_STABILITY_OPT_IN=
// gen_ai_latest_experimental) is getServiceName(), OTEL_SERVICE_NAME or "strands-agents": the
// service, not the provider, so it is not read as the provider. The chat span may carry
// gen_ai.server.request.duration, the provider's metrics.latencyMs in MILLISECONDS
// (_setMetricsAttributes; only Bedrock's ConverseStream reports it, the OpenAI model does not),
// where the conventions' metric of that name is in seconds: it is not read. The TypeScript SDK
// writes no time to first chunk on a span; it records Bedrock's timeToFirstByteMs / 1000 as the
// metric gen_ai.server.time_to_first_token (telemetry/meter.js) only. The Python SDK writes its
// timeToFirstByteMs, the time from the model request to its first content block
// (event_loop/streaming.py process_stream, every model provider), in MILLISECONDS as the span
// attribute gen_ai.server.time_to_first_token (tracer.py
// _add_optional_usage_and_metrics_attributes): on a Strands span that attribute is read as
// milliseconds.
const StrandsStartTimeKey = "gen_ai.event.start_time"

// StrandsModelCallOperations are the gen_ai.operation.name values of Strands spans that stand for
// a request to a model (see StrandsStartTimeKey).
var StrandsModelCallOperations = []string{"chat"}

// Google's Agent Development Kit (google/adk-js, npm @google/adk; 2.0.0 read in
// dist/esm/telemetry/tracing.js, captured in testdata/captured/adk-*). Every span comes from one
// tracer, trace.getTracer("gcp.vertex.agent", version). The model call is the span "call_llm"
// (agents/llm_agent.js, LlmAgent: tracer.startSpan("call_llm"), one per request to the model),
// whose attributes traceCallLlm writes for every response of the stream:
//
//	span.setAttributes({
//	  "gen_ai.system": "gcp.vertex.agent",
//	  "gen_ai.request.model": llmRequest.model, ...
//
// and usage (gen_ai.usage.input_tokens / output_tokens from usageMetadata), and NO
// gen_ai.operation.name: it counts under the legacy conventions' rule (gen_ai.system). That
// gen_ai.system names ADK, not the model's provider (the Gemini API, Vertex AI or Apigee alike;
// the Python ADK, google/adk-python src/google/adk/telemetry/tracing.py trace_call_llm, writes
// the same value), so a span whose gen_ai.system is ADKSystem has no provider read from it.
// Its other spans carry gen_ai.operation.name: invoke_agent (traceAgentInvocation),
// invoke_workflow (traceWorkflowInvocation), execute_tool (traceToolCall) and execute_node
// (traceNodeExecution, on workflow/node_runner.js's "execute_node {name}" and
// "execute_node_attempt {name}" spans, one for a Workflow run as the root and one per node), all
// in DefaultExcludedOperations; the runner's "invocation" span has none. ADK writes no timing
// on any span: no time to first chunk, and the call_llm span ends when the application has
// drained the step, after the tools the reply asked for (execute_tool is its child).
const ADKSystem = "gcp.vertex.agent"

// vLLM's request tracing (--otlp-traces-endpoint): one SERVER span "llm_request" per finished
// request (V1 engine: vllm/v1/engine/output_processor.py OutputProcessor.do_tracing; V0:
// vllm/engine/llm_engine.py create_trace_span), with latencies in seconds and no
// gen_ai.operation.name. V1 writes no model name; V0 writes only gen_ai.response.model.
const (
	VLLMTimeToFirstTokenKey = "gen_ai.latency.time_to_first_token"
	VLLMEndToEndKey         = "gen_ai.latency.e2e"
	VLLMTimeInQueueKey      = "gen_ai.latency.time_in_queue"
)

// The AWS SDK instrumentations of opentelemetry-js-contrib (npm @opentelemetry/instrumentation-aws-sdk,
// 0.79.0 read in dist/aws-sdk.cjs and dist/services/bedrock-runtime.cjs, captured in
// testdata/captured/bedrock-*) and opentelemetry-python-contrib (opentelemetry-instrumentation-
// botocore, read at 466ae4c in extensions/bedrock.py and bedrock_utils.py, written in
// testdata/written/botocore-bedrock-*), which the AWS Distro for OpenTelemetry ships, write a
// CLIENT span for every AWS call ("{service}.{operation}", rpc.system AWSSDKRPCSystem, rpc.service,
// rpc.method): none of those keys is read, so an S3, SQS or DynamoDB call is no model call. Their
// Bedrock Runtime extension adds, on Converse, ConverseStream, InvokeModel and
// InvokeModelWithResponseStream only, gen_ai.system AWSBedrockSystem (the conventions' provider
// value, under the deprecated key), gen_ai.request.model (the modelId) and usage; the span of a
// stream ends when the stream has been read. Python names every one "chat {model}" with
// gen_ai.operation.name chat (text_completion for an amazon.titan InvokeModel); JS does so for
// Converse and ConverseStream only: its InvokeModel spans keep "BedrockRuntime.InvokeModel[...]"
// and carry no gen_ai.operation.name, so they count under the legacy conventions' rule
// (gen_ai.system), with no operation. Neither writes a time to first token on a span. JS reads a
// Claude stream's output tokens from message_start (1), not from message_delta's final count.
const (
	AWSSDKRPCSystem  = "aws-api"
	AWSBedrockSystem = "aws.bedrock"
)

// LiteLLM (BerriAI/litellm, Python SDK and proxy) with its otel callback: litellm/integrations/
// opentelemetry.py (read at 00145a6c9181a61fd7fda687b42fdefd301d219a) writes each call once it has
// finished, from its logging payload. The span that carries the call is litellm_request (INTERNAL,
// _start_primary_span) when there is no parent span or USE_OTEL_LITELLM_REQUEST_SPAN=true; through
// the proxy without that variable (the default since v1.81.0) it is the proxy's own "Received
// Proxy Server Request" (SERVER, create_litellm_proxy_request_started_span), onto which
// _handle_success writes set_attributes; with an application's span active, that span. Its child
// raw_gen_ai_request (_maybe_log_raw_request, with message logging on) carries only
// llm.<provider>.<key> names: no model call. So one call, one span with gen_ai.system (or
// gen_ai.provider.name under OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental).
//
// set_attributes writes the call type ("acompletion" for every proxy request, "aembedding", ...)
// as llm.request.type and, with message logging on, for any call type but "completion" (written
// "chat") as gen_ai.operation.name too; a span whose operation equals its llm.request.type, or
// that carries LiteLLMMarkerKey, is read with LiteLLM's own mapping of its call type to the
// conventions' operations (OTELGenAISemconvMixin._gen_ai_operation_name). Its provider is
// LiteLLM's own name (custom_llm_provider, litellm/types/utils.py LlmProviders: "bedrock",
// "vertex_ai", "gemini", ...), read on such spans under the conventions' names. No span carries a
// time to first token: completion_start_time goes only to the metric
// gen_ai.client.response.time_to_first_token (_record_time_to_first_token_metric).
const (
	LiteLLMRequestSpanName    = "litellm_request"
	LiteLLMRawRequestSpanName = "raw_gen_ai_request"
	LiteLLMProxySpanName      = "Received Proxy Server Request"
	// LiteLLMMarkerKey is on every span set_attributes writes, whatever the mode: every key of
	// StandardLoggingMetadata is written as metadata.<key>, None as "". A span with it and
	// llm.request.type is LiteLLM's, whose llm.request.type is its call type, not OpenLLMetry's
	// request type ("completion" is LiteLLM's chat call).
	LiteLLMMarkerKey = "metadata.user_api_key_hash"
)

// DefaultExcludedOperations are the gen_ai.operation.name values of spans that are not model calls:
// agents, their steps and the tools they run, which wrap model calls and often repeat their token
// usage; and the conventions' operations that stand for no request to a model
// (open-telemetry/semantic-conventions-genai, model/gen-ai/spans.yaml and the operation list of
// docs/gen-ai/client-inference.md): "plan", an "agent planning or task decomposition phase" whose
// "LLM call that generates the plan SHOULD be a child of the plan span"; "retrieval", a request
// "that retrieves relevant information or context from a vector database or search system";
// "fetch_response", which fetches "a previously generated model response by its identifier,
// without performing inference"; and the memory operations of gen_ai.memory.client, "calls to
// memory systems". And "execute_node", not one of the conventions' names, which Google ADK writes
// on its workflow's node spans (traceNodeExecution, see ADKSystem) and Strands on its graph's
// (startNodeSpan, see StrandsStartTimeKey): a node runs an agent, a tool or a function, and its
// span wraps their model calls. And the OpenAI Agents SDK's handoffs and guardrail checks as
// opentelemetry-instrumentation-openai-agents-v2 names them (OpenAIAgentsHandoffOperation,
// OpenAIAgentsGuardrailOperation). They add no duration, no tokens and no time to first chunk. The
// inference operations (chat, text_completion, generate_content) and embeddings count.
var DefaultExcludedOperations = []string{
	"invoke_agent", "invoke_workflow", "create_agent", VercelAgentStepOperation, "execute_tool",
	"execute_node", OpenAIAgentsHandoffOperation, OpenAIAgentsGuardrailOperation,
	"plan", "retrieval", "fetch_response",
	"create_memory_store", "delete_memory_store", "create_memory", "update_memory", "upsert_memory",
	"search_memory", "delete_memory",
}

// The OpenTelemetry Python GenAI instrumentations of open-telemetry/opentelemetry-python-contrib
// (read at 466ae4c00de77d1f54f77a9600f1d08eba2306b5, instrumentation-genai/ and
// util/opentelemetry-util-genai; testdata/written/openai-v2, google-genai, vertexai and
// openai-agents-v2). None writes a time to first chunk, on a span or as a metric.
//
// opentelemetry-instrumentation-openai-agents-v2 (src/opentelemetry/instrumentation/openai_agents/
// span_processor.py, GenAISemanticProcessor) is a TracingProcessor of the OpenAI Agents SDK: it turns
// every SDK span into an OTel span, each with gen_ai.operation.name from _get_operation_name:
//
//	if _is_instance_of(span_data, GenerationSpanData): ... CHAT (or TEXT_COMPLETION, EMBEDDINGS)
//	if _is_instance_of(span_data, AgentSpanData): return GenAIOperationName.INVOKE_AGENT
//	if _is_instance_of(span_data, FunctionSpanData): return GenAIOperationName.EXECUTE_TOOL
//	if _is_instance_of(span_data, ResponseSpanData): return GenAIOperationName.CHAT
//	... TRANSCRIPTION ("transcription"), SPEECH ("speech_generation"),
//	if _is_instance_of(span_data, GuardrailSpanData): return GenAIOperationName.GUARDRAIL
//	if _is_instance_of(span_data, HandoffSpanData): return GenAIOperationName.HANDOFF
//	return "unknown"
//
// with GUARDRAIL = "guardrail_check" and HANDOFF = "agent_handoff" ("not yet covered by the spec").
// One request to the model is one generation span (a Chat Completions model) or one response span
// (the Responses model, the SDK's default), "chat {model}" (CLIENT). A guardrail check and a handoff
// ask no model (a guardrail that runs an agent has that agent's own spans below it): they are in
// DefaultExcludedOperations. The SDK's other span types, the run's task span and each turn's span
// (openai-agents 0.14.0 and later, by default), custom spans, MCP tool listings and speech groups,
// are written "unknown", with no model and no usage (_extract_genai_attributes adds attributes for
// the known types only): a span whose operation is UnknownOperation and that names no model is no
// model call (another instrumentation that writes "unknown" on a request whose model it knows still
// counts). The trace itself becomes a SERVER span "invoke_agent" (on_trace_start), excluded as
// agents are. Every span carries gen_ai.provider.name and gen_ai.system, both "openai" unless
// configured.
//
// opentelemetry-instrumentation-google-genai (generate_content.py) and
// opentelemetry-instrumentation-vertexai (utils.py get_genai_request_attributes) write, without
// OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (their default), gen_ai.system
// "vertex_ai" or "gemini": GenAiSystemValues.VERTEX_AI.name.lower() (google-genai,
// _determine_genai_system) and GenAiSystemValues.VERTEX_AI.value (vertexai), the conventions' names
// before gcp.vertex_ai and gcp.gemini, read under those (genaispan, conventionsSystem). In the
// experimental mode they write no provider on the span. vertexai wraps generate_content only, not
// stream_generate_content: a streamed Vertex AI call gets no span.
const (
	OpenAIAgentsHandoffOperation   = "agent_handoff"
	OpenAIAgentsGuardrailOperation = "guardrail_check"
	UnknownOperation               = "unknown"
)
