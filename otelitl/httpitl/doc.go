// Package httpitl records the rhythm of streamed LLM replies at the HTTP layer, whatever SDK or
// language sits on top: one streaming-response reader, used by an http.RoundTripper
// ([NewTransport]) for applications, by an http.Handler middleware ([NewHandler]) for servers and
// gateways, and by the otelitl-proxy command for applications in any language.
//
//	client := &http.Client{Transport: httpitl.NewTransport(http.DefaultTransport)}
//	// give client to the SDK: option.WithHTTPClient(client), genai.ClientConfig{HTTPClient: client}, ...
//
// One span per call: an SDK that writes model-call spans of its own when a tracer provider is set
// (anthropic-sdk-go's anthropic.messages.create) would be counted beside the transport's; turn it
// off (anthropic-sdk-go: option.WithoutOpenTelemetry()). Nor put an SDK wrapper (openaiitl,
// anthropicitl, goopenaiitl) over a client with this transport: each makes a span.
//
// # Protocols
//
// A request is recognised by its method (POST) and the end of its URL path, so that base URLs with
// prefixes work. Other requests pass through untouched, without a span.
//
//	path ends with                 protocol                          gen_ai.operation.name  gen_ai.provider.name
//	/chat/completions              OpenAI Chat Completions and       chat                   openai
//	                               compatible servers (vLLM,
//	                               llama.cpp, LM Studio, ...)
//	/completions                   OpenAI Completions                text_completion        openai
//	/responses                     OpenAI Responses                  chat                   openai
//	/openai/deployments/{d}/...,   Azure OpenAI: the three above     as above               azure.ai.openai
//	/openai/... on an Azure host   (see Azure OpenAI)
//	/models/... on NAME.services.  Azure AI model inference: the     as above               azure.ai.inference
//	ai.azure.com, or a serverless  OpenAI paths (see Azure AI model
//	endpoint's host                inference)
//	/v1/messages                   Anthropic Messages                chat                   anthropic (aws.bedrock on
//	                                                                                        bedrock-mantle.REGION.api.aws)
//	publishers/anthropic/models/   Claude on Vertex AI: Anthropic    chat                   gcp.vertex_ai
//	{m}:streamRawPredict, or       Messages, the model in the URL
//	{m}:rawPredict                 (see Claude on Vertex AI)
//	models/{m}:streamGenerateContent, Gemini (with alt=sse: SSE;     generate_content       gcp.gemini (gcp.vertex_ai
//	models/{m}:generateContent     without: a streamed JSON array)                          under /publishers/)
//	/api/chat, /api/generate       Ollama (NDJSON)                   chat, text_completion  ollama
//	/model/{m}/converse-stream     Amazon Bedrock ConverseStream     chat                   aws.bedrock
//	                               (the AWS event stream)
//	/model/{m}/invoke-with-        Amazon Bedrock InvokeModelWith-   chat                   aws.bedrock
//	response-stream                ResponseStream (the AWS event
//	                               stream; each family's JSON)
//
// # Claude on Vertex AI
//
// Anthropic's SDKs (anthropic-sdk-go's vertex package among them) send a Messages request for Claude
// on Vertex AI to .../publishers/anthropic/models/{model}:streamRawPredict (:rawPredict unstreamed),
// the model moved from the body into the URL; the reply is the Messages API's own, SSE events or one
// message. It is read as Anthropic's, with gen_ai.provider.name "gcp.vertex_ai", as Gemini on
// Vertex AI is, and the URL's model (claude-sonnet-4-5@20250929) as the request model. Only the
// anthropic publisher's: rawPredict under another publisher (mistralai, ...) is that provider's
// own API, and count-tokens:rawPredict, the token count, is no generation; both pass untouched.
//
// # Azure OpenAI
//
// An OpenAI request (the paths above) is Azure OpenAI's, gen_ai.provider.name "azure.ai.openai"
// (the semantic conventions' value for it), when its path has a deployment,
// /openai/deployments/{d}/chat/completions (or /completions), on any host: a gateway in front of
// Azure (API Management, otelitl-proxy) keeps Azure's paths, and no other API uses them; or when
// its path begins with /openai/, or with a Foundry project's /api/projects/{project}/openai/, on
// one of Azure OpenAI's hosts: NAME.openai.azure.com, NAME.cognitiveservices.azure.com or
// NAME.services.ai.azure.com (an Azure OpenAI, AI services or Foundry resource), and the same names
// under azure.us (Azure Government) and azure.cn (Azure China, operated by 21Vianet), whose
// resources take the same paths. That is how the v1 API (/openai/v1/chat/completions,
// /openai/v1/responses), the Responses API (/openai/responses) and a project's OpenAI API are told,
// since their paths name no deployment. A project's is what azure-ai-projects' get_openai_client
// gives (its base URL is the project's endpoint, https://NAME.services.ai.azure.com/api/projects/
// {project}, with /openai/v1): Azure OpenAI's API, through which Foundry's other models (DeepSeek,
// Llama, ...) answer too, and whose requests are recorded as Azure OpenAI's as those on the
// resource's own /openai/v1 are. The host is matched as a whole suffix after at least one byte, in
// any case: a look-alike such as evil-openai.azure.com.example.org is OpenAI's. Other /openai/
// paths on other hosts (Groq's api.groq.com/openai/v1) stay OpenAI's, and so does a v1 request
// through a gateway, whose host is the gateway's: nothing in it tells Azure. [NewHandler] sees no
// host in a server's request URL, only the path.
//
// gen_ai.request.model is the body's "model" when it has one, else the deployment's name. The
// conventions define the attribute as the name of the model the request is made to and say nothing
// of deployments; an Azure request is made to a deployment, which chooses the model, and its body
// usually names none. The deployment's name is what the caller chose, what openai-go's azure
// package puts in the path (from the body's model, which it keeps there), and what OpenTelemetry's
// openai-v2 and OpenLLMetry's openai instrumentations record for Azure: the SDK's model argument,
// which Python's AzureOpenAI client puts in the path as the deployment. The body's model wins when
// both are there, as in those instrumentations. The model that answered is gen_ai.response.model,
// from the chunks' "model" as for OpenAI (gpt-4o-2024-11-20), so both are on the span and its
// metrics. Nothing else is guessed: a v1 request whose body names no model has none. A body whose
// model comes after its first [WithMaxRequestBytes] bytes is named by the deployment, which the
// span started with.
//
// Azure's streams are OpenAI's, with more: a first event of prompt_filter_results with no choices
// (and an empty id and model), content_filter_results on every choice, and an asynchronous
// filter's content_filter_offsets on a choice without a delta. None of them carries content, so
// none is a chunk, and the time to first chunk is the first content delta's.
//
// With openai-go's azure package, give the client this transport:
// openai.NewClient(azure.WithEndpoint(endpoint, apiVersion), azure.WithAPIKey(key) or
// azure.WithTokenCredential(cred), option.WithHTTPClient(&http.Client{Transport:
// httpitl.NewTransport(nil)})); the package keeps the client's transport under its own redirect
// check. Its WithUnsafeAllowHTTP, for a plain-HTTP loopback endpoint, sends such requests on a
// transport of its own, around this one: they get no span. The openaiitl wrappers tell Azure by
// these rules too, from the URL the SDK sends to (the same code); goopenaiitl, which sees no URL,
// takes WithProvider("azure.ai.openai").
//
// # Azure AI model inference
//
// The Azure AI model inference API (a Foundry resource's one endpoint for its deployments, of
// OpenAI's models and others'; serverless endpoints; the azure-ai-inference SDKs) takes OpenAI's
// Chat Completions requests and streams OpenAI's chunks. Its requests are recorded as
// gen_ai.provider.name "azure.ai.inference", the conventions' value for it: a path under /models/
// on a Foundry resource's host, https://NAME.services.ai.azure.com/models/chat/completions?
// api-version=... (and under azure.us and azure.cn), or any of the OpenAI paths on a serverless
// endpoint's host, https://NAME.REGION.models.ai.azure.com/chat/completions (or
// /v1/chat/completions), or NAME.REGION.inference.ai.azure.com (the form the Azure.AI.Inference
// .NET library's guide gives), in the public cloud only: no other cloud's serverless hosts are
// known here. On a Foundry resource the body's "model" names the deployment that answers (Azure
// routes /models/ requests by it) and is the request model. A serverless endpoint serves one
// deployment, NAME, the first label of its host: it is the request model when the body names none,
// as a deployment's path is for Azure OpenAI (above). A host with other labels than NAME.REGION
// before models.ai.azure.com or inference.ai.azure.com names no deployment: GitHub Models' Azure
// endpoint, models.inference.ai.azure.com, is the inference API's, its model the body's.
//
// Neither of the API's request headers names the model: extra-parameters says what the service
// does with members it does not know (error, drop, pass-through), and azureml-model-deployment
// chooses a deployment behind an Azure Machine Learning online endpoint
// (NAME.REGION.inference.ml.azure.com), whose container serves whatever API it was built with:
// such endpoints are not told from OpenAI's. Through a gateway, /models/ paths are OpenAI's: only
// the host tells them.
//
// The response body is cut by its Content-Type (text/event-stream: SSE; application/x-ndjson:
// NDJSON; otherwise JSON values, and the elements of a top-level array as each completes); a
// Bedrock reply is read as the AWS event stream (application/vnd.amazon.eventstream: binary
// messages with typed headers) whatever its Content-Type, as the SDKs read it. Bedrock's model id
// is the URL's path segment, unescaped (a model id, an inference profile id or an ARN), and the
// URL says the reply streams: nothing of a Bedrock request's body is used, though it is read as
// every request's is (see Guarantees).
//
// Bedrock's InvokeModelWithResponseStream carries each model family's own JSON: every event of
// type "chunk" is {"bytes": "<base64>"}, and the decoded bytes are one event of the family's
// stream. The family is told from each decoded chunk's top-level members, never from the model id
// (an inference profile's ARN does not name it); a chunk with members of several families is read
// as the first of this list:
//
//	family             marked by                           a chunk is                          end, finish reason
//	Anthropic Claude   type (the Messages API's events,    content_block_delta with text,      message_stop;
//	                   read as for /v1/messages)           thinking or partial_json            message_delta's stop_reason
//	Amazon Nova        contentBlockDelta, messageStop,     contentBlockDelta, as               messageStop's stopReason
//	                   metadata, messageStart, ...         ConverseStream's
//	Cohere Command R   event_type                          "text-generation" with a text;      "stream-end", finish_reason
//	                                                       "tool-calls-chunk" with a text (the
//	                                                       tool plan) or a tool_call_delta
//	                                                       with parameters or text;
//	                                                       "tool-calls-generation" with
//	                                                       tool_calls or a text, when no
//	                                                       tool-calls-chunk was a chunk
//	Amazon Titan Text  outputText, completionReason, ...   a non-empty outputText              completionReason
//	Mistral            outputs                             an outputs[] element with a text    outputs[].stop_reason
//	Meta Llama         generation, prompt_token_count,     a non-empty generation              stop_reason
//	                   generation_token_count
//	OpenAI gpt-oss,    choices, error (Chat Completions'   a choice's delta as on              choices[].finish_reason, else
//	DeepSeek,          chunks, read by the                 /chat/completions (content,         (DeepSeek) choices[].stop_reason
//	AI21 Jamba         /chat/completions reader)           reasoning, tool-call arguments),    when a string
//	                                                       or its text (DeepSeek)
//
// Cohere's "tool-calls-generation" carries the calls whole, with the plan as its text: after
// tool-calls-chunk events it repeats what they carried and is no chunk; a reply without them (a
// stream that sends the calls only whole) has its calls arrive in it, and it is one chunk, as a
// tool-call argument delta is on the other protocols, so that a reply that only calls a tool has
// a time to first chunk. A choice's stop_reason is read only here: on
// /chat/completions vLLM sends the stop string or token id that ended a choice under that name,
// beside its finish_reason. On /chat/completions the end is [DONE]; Bedrock sends none, so an
// OpenAI-shaped family's finish reason ends the stream, as Mistral's and Llama's do. A chunk
// whose only family member is "error" is read as an OpenAI-shaped one: an error object instead of
// choices ({"error": {"code": ...}}) fails the generation as on /chat/completions (error.type its
// code, type or status; "stream_error" for an error that is no object; "error": null names none),
// and the chunks after it still count, since the SDK passes them on (aws-sdk-go-v2 hands an error
// chunk's bytes to the application as any other's: the real-SDK test TestBedrockInvokeFailures).
// Bedrock documents its own in-stream failures only as exception messages (the ResponseStream
// union's internalServerException, modelStreamErrorException, modelTimeoutException,
// serviceUnavailableException, throttlingException, validationException: read as ConverseStream's);
// that it passes an OpenAI-shaped model's error chunk on in a chunk's bytes, as vLLM and OpenAI
// stream one, was not verified against a Bedrock stream, and reading it costs nothing when none
// comes.
//
// Token usage comes from the family's own counts (Claude's message_start input_tokens and
// message_delta output_tokens, Nova's metadata.usage, Titan's inputTextTokenCount and
// totalOutputTextTokenCount, Llama's prompt_token_count and generation_token_count, an
// OpenAI-shaped chunk's usage.prompt_tokens and completion_tokens); Bedrock adds
// amazon-bedrock-invocationMetrics (inputTokenCount, outputTokenCount) to the last chunk of every
// family, which ends the stream too, and fills the counts the family did not give (Mistral's,
// Cohere's and DeepSeek's, whose chunks carry none here). The family's own counts win: they are
// what the same model reports on its other paths (the Anthropic API, ConverseStream's metadata),
// and they come before the last chunk, so that a stream cut before it keeps them. Another family
// (Claude's legacy Text Completions, {"completion": ...}, ...) gets a span with the metrics' usage
// and end, and no chunks.
//
// The shapes were checked against: anthropic-sdk-go/v2 v2.15.0's bedrock package (it decodes the
// chunk's {"bytes"} with base64.StdEncoding and passes the bytes on as Anthropic's SSE events,
// named by their "type"); aws-sdk-go-v2 bedrockruntime v1.63.13 with smithy-go (the chunk event and
// its base64 blob; a deserialization error ends the stream); the AWS code examples
// (awsdocs/aws-doc-sdk-examples, python/example_code/bedrock-runtime: Llama's chunk["generation"],
// Mistral's chunk["outputs"][0]["text"], Titan's chunk["outputText"]) and the Amazon Nova user
// guide's "Streaming responses" (chunk["contentBlockDelta"]["delta"]["text"]). Titan's counts and
// completionReason, Llama's counts and stop_reason, and amazon-bedrock-invocationMetrics were not
// checked against a primary source: they are Bedrock's model-parameter documentation as summarised
// when this was written, and langchaingo v0.1.14's Bedrock client (provider_meta.go: generation,
// prompt_token_count, generation_token_count, stop_reason; provider_anthropic.go: the metrics'
// inputTokenCount and outputTokenCount). Cohere's streamed events, tool calls included, were
// checked against cohere-python's v1 chat stream types, generated from Cohere's API definition
// (src/cohere/types/streamed_chat_response.py: event_type "text-generation" with text,
// "tool-calls-chunk" with tool_call_delta {index, name, parameters, text}, "tool-calls-generation"
// with text and tool_calls, "stream-end" with finish_reason), not against a Bedrock stream; a
// top-level text in a tool-calls-chunk (the tool plan) is what third-party readers of Cohere's
// stream read too, and is not in those types. DeepSeek's chunk, {"choices": [{"text",
// "stop_reason"}]} with stop_reason "stop" or "length", is the response body of Bedrock's DeepSeek
// model parameters page (model-parameters-deepseek), which names InvokeModelWithResponseStream
// beside InvokeModel but shows no streamed chunk; that each chunk has that shape was not verified.
// gpt-oss's: Bedrock's OpenAI model parameters page (model-parameters-openai) says its InvokeModel
// request and response are OpenAI's Chat Completions'; that InvokeModelWithResponseStream streams
// chat.completion.chunk objects (choices[].delta) was not verified against a Bedrock stream. AI21
// Jamba's: AI21's own API reference streams choices[].delta ({"role"} first, then {"content"}),
// finish_reason, and usage in the last chunk only; that Bedrock passes these chunks on unchanged
// was not verified. A shape that differs records fewer chunks or counts, never wrong bytes.
//
// gen_ai.operation.name is "chat" for every family: the call is named before any reply tells the
// family, ConverseStream names the same models' calls "chat", and the families Bedrock serves this
// way are chat models (the Messages API, Nova's messages, Chat Completions' messages, Llama's and
// Mistral's instruction templates); text_completion, OpenAI's legacy Completions, would split one
// model's calls in two by the API used.
//
// The streaming proxy (otelitl-proxy) does not serve Bedrock: the SDKs sign each request with
// SigV4 for Bedrock's host, and a proxy in between would break the signature.
//
// # What counts as a chunk
//
// A chunk is an event that carries output: text, reasoning, or tool-call arguments. Role-only
// deltas, pings, keep-alive comments, usage-only and metadata events are not chunks.
//
//   - Chat Completions: a choice's delta with a non-empty content, refusal, reasoning_content,
//     reasoning, tool_calls[].function.arguments, function_call.arguments or audio.transcript;
//     Completions: a choice's text.
//   - Responses: response.output_text.delta, response.refusal.delta, response.reasoning_text.delta,
//     response.reasoning_summary_text.delta, response.function_call_arguments.delta,
//     response.custom_tool_call_input.delta, response.mcp_call_arguments.delta and
//     response.audio.transcript.delta events with a non-empty delta.
//   - Anthropic: content_block_delta with a non-empty text, thinking or partial_json. An SSE event
//     without a name (no event: line) is passed over whatever its data, a delta, message_stop or
//     an error, as Anthropic's SDKs (Go, Python, TypeScript) pass over it.
//   - Gemini: a response whose candidates' parts carry text (thoughts included), functionCall,
//     executableCode, codeExecutionResult or inlineData.
//   - Ollama: a line whose message has content, thinking or tool_calls (/api/chat), or whose
//     response or thinking is non-empty (/api/generate).
//   - Bedrock: a contentBlockDelta event whose delta carries a non-empty text, toolUse.input or
//     reasoningContent.text; citation, image, toolResult, and reasoning signature or
//     redactedContent deltas are not. InvokeModelWithResponseStream: by the family (see Protocols).
//
// A chunk's arrival is when the caller's Read returned the bytes that completed its event (for
// [NewHandler]: when the Flush that sent it returned, or the handler's end for bytes never
// flushed). Every chunk counts one token; the provider's usage gives the totals.
//
// # What is recorded
//
// gen_ai.request.model from the request body's "model" (or the Gemini or Bedrock URL; for Azure
// OpenAI and a serverless Azure AI inference endpoint, the deployment when the body names no
// model),
// gen_ai.request.stream, server.address and server.port from the URL, http.response.status_code,
// gen_ai.response.model, gen_ai.response.id, gen_ai.response.finish_reasons (Bedrock's:
// messageStop's stopReason; InvokeModelWithResponseStream's: the family's, see Protocols), and
// token usage from the stream's usage event (the OpenAI usage chunk, Responses'
// response.completed, Anthropic's message_start for the input tokens and message_delta, Gemini's
// usageMetadata with thoughts counted as output, Ollama's final prompt_eval_count and eval_count,
// Bedrock's metadata event's inputTokens and outputTokens; InvokeModelWithResponseStream: the
// family's counts, else amazon-bedrock-invocationMetrics).
// Prompt and completion text never reach the span. A response
// that is not streamed gets a span with its duration and usage and no chunks. A redirect (3xx)
// that the client follows gets a span of its own, with its http.response.status_code and no
// chunks, which the collector does not count as a model call; the next hop's span is the
// generation.
//
// error.type is the HTTP status code of an error answer (400 and above); for a request that got no
// answer (the base transport's error), why, from a fixed set read from the error's type, never its
// message (which names the address): "connection_refused", "dns_error" (the name did not resolve),
// "timeout" (dialing, the TLS handshake or the response's headers took too long), "tls_error" (the
// handshake failed: a certificate not trusted, a server without TLS), else "connection_error" (the
// connection reset or closed before the answer), as otelitl-proxy and the SDK wrappers name the
// same failures; a base transport's error that names its own type (an ErrorType method) keeps it,
// and the caller gets the error unchanged; the type or code of an
// error event in the stream when it looks like a code (1 to 64 letters, digits, '_', '-' or '.':
// never its message, nor free text put where a code belongs; "stream_error" otherwise): an error
// object ({"error": {...}} in an OpenAI Chat Completions or Responses stream, Gemini's error) is
// named by the first non-empty of its code, type and status, and in an OpenAI stream an error that
// is no object is "stream_error"; a Responses error event (type "error") is named by its own code,
// else by its error object, nested as OpenAI sends it; for Bedrock, the :exception-type header of
// an exception message (throttlingException, modelStreamErrorException, ...) or the :error-code of
// an error message; for a Responses stream that ends in a failed or cancelled response, its
// error's code when it looks like one, else "response_failed" or "response_cancelled";
// "incomplete_stream" when the body ends (or is cut) without its protocol's end marker ([DONE];
// response.completed or response.incomplete; message_stop; a Gemini candidate with a
// finishReason; Ollama's "done": true; Bedrock's messageStop, which its metadata event follows;
// InvokeModelWithResponseStream's family end or amazon-bedrock-invocationMetrics), or a Bedrock
// stream's framing breaks before messageStop (see Guarantees), or a Bedrock event the SDK cannot
// decode comes before the end (see Guarantees); "cancelled" when the
// caller closes the body before the end or its context is cancelled (before the answer too);
// "timeout" when its deadline passes; for [NewHandler], "panic" when the wrapped handler panics (the panic goes on to the
// server).
//
// An error event names the generation wherever it comes, before its protocol's end marker or after
// it (an Anthropic error after message_stop, a Responses error after response.completed, a Chat
// Completions error after a finish reason): the SDKs hand the application that error, and the
// first error names the generation whatever follows it, as the SDK wrappers name it. Nothing after
// a Chat Completions or Completions stream's [DONE] is read, though: every SDK stops reading there
// (openai-go, go-openai, OpenAI's Python SDK), so an error event, a chunk or usage after it
// reaches no application, and would have reached the span only when the bytes were read (read to
// the end of the body, by the proxy or the handler, or arriving with [DONE]).
//
// The SDK wrappers cannot see [DONE] (the SDKs report it and the end of the body alike): they take
// a choice's finish_reason for a Chat Completions stream's end. A stream cut, or closed by the
// application, between a finish reason and [DONE] (where the usage chunk comes) is
// "incomplete_stream" or "cancelled" here and complete there, and a [DONE] without any finish
// reason the reverse.
//
// An event with "error": null names no error, nor does an error member in an event whose type names
// something else (a Responses delta); openai-go ends its stream at either (its Next returns false,
// its Err is an *ssestream.StreamError) and closes the body: through this transport that is
// "cancelled", the body closed before the end, where openaiitl records the SDK's failure
// ("stream_error", or the error's name).
//
// # Trace context
//
// [NewTransport] puts the generation span's context in the headers of the request it sends, with
// the propagators of [WithPropagators] (by default the global ones, which carry nothing until the
// application sets them), so that the server's spans join the trace as the generation's children;
// [NewHandler] reads the caller's context from the headers with the same propagators. The
// caller's request is not changed: the headers go on a copy.
//
// # Guarantees
//
// The caller gets every byte unchanged and as soon as the base transport returns it: nothing is
// buffered, events are parsed as they pass. At most one event is held, up to [WithMaxEventBytes]
// (for the AWS event stream, a message's headers and payload); a larger event passes unread. An
// event is read in one pass over its JSON that skips what it does
// not need and allocates nothing for a content delta (about half a microsecond for a typical one);
// it accepts and reads exactly what encoding/json would, and an event that is not valid JSON
// records nothing. Only "model" and "stream" are read from a request body, wherever they are in
// it (openai-go writes the messages first, and a prompt with an image is megabytes long): from its
// first [WithMaxRequestBytes] bytes, read before the span starts and then replayed ahead of the
// rest with ContentLength unchanged, and from the rest as it is sent, holding nothing of it (a
// model found there names the span and its metrics at its end: samplers saw the name without it).
// The span starts with the protocol's default when the first part says nothing of "stream" (Ollama
// streams unless told not to; the OpenAI and Anthropic APIs do not unless told to); a "stream"
// found in the rest that says otherwise sets gen_ai.request.stream to what it says, false
// included, since an attribute cannot be removed and false says "not streamed" as its absence
// does (the ollama client writes "stream" after the messages, so that a long prompt puts a
// "stream": false past the first part). Gemini's and Bedrock's bodies are not asked: their URLs
// say whether they stream. How the reply is read does not wait on it: the reply's Content-Type
// decides (a whole Ollama reply is application/json, whose events count no chunks), so the rest of
// the record is true whatever the request's body said. A server that answers before it has read
// the body, and ends its reply before the rest is sent, leaves the span with the default.
// GetBody is never called: anthropic-sdk-go's bedrock package makes one that rewinds and returns
// the very reader Body reads, so that reading its "copy" would empty the body sent. The text
// inside strings, most of a prompt, is skipped at memory speed (an image's base64 at about 20
// GB/s, escaped text at about 1 GB/s: BenchmarkScanRequest). The generation ends exactly once: at the end of
// the body, at Close, or when the request's context ends, even if the caller never reads again; no
// goroutine is started.
//
// In the AWS event stream both CRCs of every message are checked as the bytes pass (hash/crc32,
// holding no byte more), because the SDKs check them: a message whose CRC does not hold never
// reaches the application (aws-sdk-go-v2 ends the stream with an error there), so it does not
// reach the span either. A prelude whose CRC or lengths do not hold, a message whose CRC does not,
// or headers that do not decode break the framing: no message boundary after it can be trusted,
// so the rest of the body passes unread (the caller still gets every byte), and the generation
// ends with "incomplete_stream" unless messageStop came before, whether the SDK then closes the
// body or reads on.
//
// A distinct error.type was considered and not taken. aws-sdk-go-v2 fails the stream there with
// eventstream.ChecksumError ("message checksum mismatch", as the real-SDK tests of
// otelitl/test/httpitl see it) or a LengthError, but to the application the reply was cut off
// there, as by a body that ends early or a connection reset under the stream, and those are
// "incomplete_stream" alike, in httpitl and in the SDK wrappers (otelitl/internal/wrap's
// Stream.Done names a connection failing under a stream so, rather than by its Go type). No other
// protocol's framing failure has a name of its own (an SSE, NDJSON or JSON event that does not
// parse records nothing, and a body that then ends without its end marker is "incomplete_stream"),
// and an error.type names what happened to the reply (a provider's code, cancelled, timeout,
// incomplete_stream), never a library's error type, which would split one failure's series by the
// SDK that read it.
//
// An event of a type the SDK decodes whose payload it cannot decode ends the stream the same way,
// for both Bedrock APIs: aws-sdk-go-v2 fails the stream there with an error ("deserialize event
// contentBlockDelta: ...") and closes the body, so nothing after it reaches the application, nor
// the span, and the generation ends with "incomplete_stream" unless its end came before, as for a
// broken framing: to the application the reply was cut off there. Without this a ConverseStream
// span ended "cancelled" (the body closed before messageStop, as when an application gives up),
// or with no error at all for a messageStop of null, where InvokeModelWithResponseStream's bad
// chunk was already "incomplete_stream". The SDK reads an event's payload as one JSON object,
// after whitespace, and stops at its closing brace: no payload, null, another value, or a syntax
// error before that brace fails it (its parser checks the syntax encoding/json checks, nesting
// limit included); bytes after the brace are never looked at, and are not here either, so that
// such an event is read as the application gets it. These were checked with the real
// aws-sdk-go-v2 (bedrockruntime v1.63.13, smithy-go v1.28.9) in otelitl/test/httpitl
// (TestBedrockFailures, TestBedrockInvokeFailures). The types it decodes are ConverseStream's
// messageStart, contentBlockStart, contentBlockDelta, contentBlockStop, messageStop and metadata,
// and InvokeModelWithResponseStream's chunk; an event of another type passes on to the
// application unread, and here too. A member of the wrong type inside a well-formed object (a
// number for a delta's text, a token count of 1.5) fails the SDK too, by the shapes of its own
// version, which httpitl does not mirror: such an event records nothing, and the span ends as the
// SDK leaves the body ("cancelled" when it closes it).
//
// An InvokeModelWithResponseStream chunk is decoded from base64 into one buffer, reused, of at
// most three quarters of the message bound (a larger chunk passed unread, as any message), and
// dropped after a chunk over 64 KiB. A chunk whose payload is no JSON object (see above), whose
// bytes are not a string, or whose string is not base64 (encoding/base64's StdEncoding, the SDKs'
// decoder) is one the SDKs cannot decode: aws-sdk-go-v2 and anthropic-sdk-go end the stream there
// with an error, so nothing after it reaches the application, nor the span: the generation ends
// with "incomplete_stream" unless its end came before. anthropic-sdk-go's bedrock package reads the
// payload with json.Unmarshal instead (v2.15.0, bedrock.go): it fails on bytes after the object,
// which aws-sdk-go-v2 never reads, and takes a payload of null as a chunk without bytes, where
// aws-sdk-go-v2 fails. Bedrock sends neither; both are read here as aws-sdk-go-v2 reads them, the
// one rule of both APIs. Decoded bytes that are not JSON, or JSON of no family read here, pass to
// the application as they are; the first record nothing, the second only their invocation
// metrics.
package httpitl
