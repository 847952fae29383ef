package httpitl

import (
	"net/http"
	"testing"

	"github.com/otelitl/itl/otelitl/internal/endpoint"
)

// TestDetectVertexClaude: Claude on Vertex AI (publishers/anthropic, streamRawPredict or
// rawPredict) is read as Anthropic's Messages API, provider gcp.vertex_ai, the model from the URL;
// another publisher's rawPredict, the token count and look-alikes are not recognised, and Gemini on
// Vertex is still Gemini's. endpoint.Provider, the SDK wrappers' view, says the same.
func TestDetectVertexClaude(t *testing.T) {
	const base = "https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/"
	for _, tc := range []struct {
		url    string
		model  string // "": not recognised as Claude
		stream bool
	}{
		{base + "anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict", "claude-sonnet-4-5@20250929", true},
		{"https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/anthropic/models/claude-opus-4-1:rawPredict", "claude-opus-4-1", false},
		{"http://127.0.0.1:8080/gateway/v1/projects/p/locations/eu/publishers/anthropic/models/claude-haiku-4-5%40x:streamRawPredict/", "claude-haiku-4-5@x", true},
		{base + "anthropic/models/count-tokens:rawPredict", "", false},
		{base + "anthropic/models/claude-sonnet-4-5:predict", "", false},
		{base + "anthropic/models/:streamRawPredict", "", false},
		{base + "anthropic/models/claude-sonnet-4-5", "", false},
		{base + "anthropic/models/a/b:streamRawPredict", "", false},
		{base + "mistralai/models/mistral-large:streamRawPredict", "", false},
		{base + "anthropicx/models/claude:streamRawPredict", "", false},
	} {
		req, err := http.NewRequest(http.MethodPost, tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := detect(req)
		p, m := endpoint.Provider(req)
		if tc.model == "" {
			if ok && c.proto == protoAnthropic {
				t.Errorf("%s recognised as %+v", tc.url, c)
			}
			continue
		}
		want := call{proto: protoAnthropic, operation: "chat", provider: providerVertex, model: tc.model, stream: tc.stream, framing: framingSSE}
		if !ok || c != want {
			t.Errorf("%s: %+v, %t; want %+v", tc.url, c, ok, want)
		}
		if p != providerVertex || m != tc.model {
			t.Errorf("%s: endpoint.Provider %q, %q; want %q, %q", tc.url, p, m, providerVertex, tc.model)
		}
		if testing.AllocsPerRun(100, func() { _, _ = detect(req) }) != 0 {
			t.Errorf("%s: detect allocates", tc.url)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"google/models/gemini-2.5-pro:streamGenerateContent?alt=sse", nil)
	if c, ok := detect(req); !ok || c.proto != protoGemini || c.provider != providerVertex || c.model != "gemini-2.5-pro" {
		t.Errorf("Gemini on Vertex: %+v, %t", c, ok)
	}
}
