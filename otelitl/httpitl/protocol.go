package httpitl

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// protocol is an LLM API whose streamed responses httpitl reads.
type protocol uint8

const (
	protoNone          protocol = iota
	protoChat                   // OpenAI Chat Completions and compatible servers
	protoCompletions            // OpenAI (legacy) Completions
	protoResponses              // OpenAI Responses
	protoAnthropic              // Anthropic Messages
	protoGemini                 // Gemini generateContent / streamGenerateContent
	protoOllamaChat             // Ollama /api/chat
	protoOllamaGen              // Ollama /api/generate
	protoBedrock                // Amazon Bedrock ConverseStream
	protoBedrockInvoke          // Amazon Bedrock InvokeModelWithResponseStream
)

// Provider names (gen_ai.provider.name). openai, azure.ai.openai, azure.ai.inference, anthropic,
// gcp.gemini, gcp.vertex_ai and aws.bedrock are the semantic conventions' values; ollama has none
// there.
const (
	providerOpenAI    = "openai"
	providerAzure     = "azure.ai.openai"
	providerInference = "azure.ai.inference" // the Azure AI model inference API
	providerAnthropic = "anthropic"
	providerGemini    = "gcp.gemini"
	providerVertex    = "gcp.vertex_ai"
	providerOllama    = "ollama"
	providerBedrock   = "aws.bedrock"
)

// call is what the request says about a generation, before any response.
type call struct {
	proto     protocol
	operation string
	provider  string
	model     string // from the URL (Gemini, Bedrock); else from the body
	stream    bool   // the request asks for a stream (or the protocol streams by default)
	framing   framing
	// deployment is an Azure deployment's name, from its URL (an Azure OpenAI deployment's path, a
	// serverless model inference endpoint's host): the model when the body names none (see doc.go).
	deployment string
}

// detect recognises a generation request by its method and the end of its URL path, so that base
// URLs with prefixes (/openai/v1, /proxy/...) work; an OpenAI path is Azure OpenAI's or the Azure
// AI model inference API's by its deployment's path or its host (openAI, in azure.go).
func detect(r *http.Request) (call, bool) {
	if r.Method != http.MethodPost || r.URL == nil {
		return call{}, false
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return openAI(r.URL, path, "/chat/completions", call{proto: protoChat, operation: "chat", provider: providerOpenAI, framing: framingSSE}), true
	case strings.HasSuffix(path, "/completions"):
		return openAI(r.URL, path, "/completions", call{proto: protoCompletions, operation: "text_completion", provider: providerOpenAI, framing: framingSSE}), true
	case strings.HasSuffix(path, "/responses"):
		return openAI(r.URL, path, "/responses", call{proto: protoResponses, operation: "chat", provider: providerOpenAI, framing: framingSSE}), true
	case strings.HasSuffix(path, "/v1/messages"):
		c := call{proto: protoAnthropic, operation: "chat", provider: providerAnthropic, framing: framingSSE}
		if bedrockMantleHost(r.URL.Host) {
			c.provider = providerBedrock // Claude on Amazon Bedrock's Mantle endpoint, Anthropic's API
		}
		return c, true
	case strings.HasSuffix(path, "/api/chat"):
		return call{proto: protoOllamaChat, operation: "chat", provider: providerOllama, stream: true, framing: framingNDJSON}, true
	case strings.HasSuffix(path, "/api/generate"):
		return call{proto: protoOllamaGen, operation: "text_completion", provider: providerOllama, stream: true, framing: framingNDJSON}, true
	case strings.HasSuffix(path, bedrockConverseStream):
		if model, ok := bedrockModel(r.URL, bedrockConverseStream); ok {
			return call{proto: protoBedrock, operation: "chat", provider: providerBedrock, model: model, stream: true, framing: framingEventStream}, true
		}
		return call{}, false
	case strings.HasSuffix(path, bedrockInvokeStream):
		// "chat" whatever the family: see doc.go.
		if model, ok := bedrockModel(r.URL, bedrockInvokeStream); ok {
			return call{proto: protoBedrockInvoke, operation: "chat", provider: providerBedrock, model: model, stream: true, framing: framingEventStream}, true
		}
		return call{}, false
	}
	if c, ok := vertexClaude(path); ok { // Claude on Vertex AI (vertex.go)
		return c, true
	}
	// Gemini: .../models/{model}:generateContent or :streamGenerateContent (Vertex AI:
	// .../publishers/google/models/{model}:...).
	slash := strings.LastIndexByte(path, '/')
	last := path[slash+1:]
	model, method, ok := strings.Cut(last, ":")
	if !ok || (method != "generateContent" && method != "streamGenerateContent") {
		return call{}, false
	}
	c := call{proto: protoGemini, operation: "generate_content", provider: providerGemini, model: model, framing: framingJSON}
	if strings.Contains(path, "/publishers/") {
		c.provider = providerVertex
	}
	if method == "streamGenerateContent" {
		c.stream = true
		if r.URL.Query().Get("alt") == "sse" {
			c.framing = framingSSE
		}
	}
	return c, true
}

// bedrockMantleHost reports whether hostport, a URL's host with or without its port, is Amazon
// Bedrock's Mantle endpoint, bedrock-mantle.REGION.api.aws, which serves Anthropic's Messages API
// (anthropic-sdk-go's bedrock.NewMantleClient, at .../anthropic/v1/messages): in any case, with or
// without the root's trailing dot, one label for the region; a look-alike
// (bedrock-mantle.us-east-1.api.aws.example.com, xbedrock-mantle.us-east-1.api.aws) is not.
func bedrockMantleHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(host, ".")
	const prefix, suffix = "bedrock-mantle.", ".api.aws"
	if len(host) <= len(prefix)+len(suffix) || !strings.EqualFold(host[:len(prefix)], prefix) || !strings.EqualFold(host[len(host)-len(suffix):], suffix) {
		return false
	}
	region := host[len(prefix) : len(host)-len(suffix)]
	return !strings.Contains(region, ".")
}

const (
	bedrockConverseStream = "/converse-stream"
	bedrockInvokeStream   = "/invoke-with-response-stream"
)

// bedrockModel returns the model of a Bedrock ConverseStream or InvokeModelWithResponseStream URL,
// .../model/{modelId}/converse-stream (or suffix): the model id unescaped. The SDKs escape it as one
// path segment (an ARN's '/' and ':' included), so it is read from the escaped path; an id whose '/'
// came unescaped is read whole too, from the last "/model/".
func bedrockModel(u *url.URL, suffix string) (string, bool) {
	p, ok := strings.CutSuffix(strings.TrimSuffix(u.EscapedPath(), "/"), suffix)
	if !ok {
		return "", false
	}
	i := strings.LastIndex(p, "/model/")
	if i < 0 {
		return "", false
	}
	model, err := url.PathUnescape(p[i+len("/model/"):])
	if err != nil || model == "" {
		return "", false
	}
	return model, true
}

// framingOf chooses how to cut a response body: by its Content-Type, else by the protocol. A
// Bedrock reply is an AWS event stream whatever its Content-Type says, since the SDKs read it as
// one.
func framingOf(contentType string, c call) framing {
	if c.proto == protoBedrock || c.proto == protoBedrockInvoke {
		return framingEventStream
	}
	ct, _, _ := strings.Cut(contentType, ";")
	switch strings.ToLower(strings.TrimSpace(ct)) {
	case "text/event-stream":
		return framingSSE
	case "application/x-ndjson", "application/jsonl", "application/jsonlines", "application/x-jsonlines":
		return framingNDJSON
	case "application/json":
		return framingJSON
	}
	if !c.stream {
		return framingJSON
	}
	return c.framing
}
