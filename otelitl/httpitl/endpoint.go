package httpitl

import (
	"net/http"

	"github.com/otelitl/itl/otelitl/internal/endpoint"
)

// The SDK wrappers tell a request's provider by httpitl's rules (see package endpoint).
func init() { endpoint.Provider = providerOf }

// providerOf returns the provider detect tells for r and the model its URL names (an Azure OpenAI
// deployment, a Bedrock model id, a Gemini or Vertex AI model); "" for both when detect does not
// recognise r.
func providerOf(r *http.Request) (provider, model string) {
	c, ok := detect(r)
	if !ok {
		return "", ""
	}
	if c.deployment != "" {
		return c.provider, c.deployment
	}
	return c.provider, c.model
}
