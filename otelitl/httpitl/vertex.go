package httpitl

import "strings"

// vertexClaude recognises Claude on Vertex AI:
// .../publishers/anthropic/models/{model}:streamRawPredict (or :rawPredict, unstreamed), where
// anthropic-sdk-go's vertex package (and Anthropic's other SDKs) send a Messages request, the model
// moved from the body into the URL. The reply is the Messages API's own (SSE events, or one
// message), read as Anthropic's; the provider is Vertex AI's. rawPredict under another publisher is
// that publisher's API, not read; count-tokens:rawPredict, the SDK's token count, is no
// generation. path is the request's path without a trailing '/'.
func vertexClaude(path string) (call, bool) {
	const publisher = "/publishers/anthropic/models/"
	i := strings.LastIndex(path, publisher)
	if i < 0 {
		return call{}, false
	}
	model, method, ok := strings.Cut(path[i+len(publisher):], ":")
	if !ok || model == "" || strings.IndexByte(model, '/') >= 0 || model == "count-tokens" ||
		(method != "streamRawPredict" && method != "rawPredict") {
		return call{}, false
	}
	return call{proto: protoAnthropic, operation: "chat", provider: providerVertex, model: model,
		stream: method == "streamRawPredict", framing: framingSSE}, true
}
