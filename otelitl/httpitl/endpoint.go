package httpitl

import (
	"net/http"

	"github.com/otelitl/itl/otelitl/internal/endpoint"
)

// The SDK wrappers tell a request's provider by httpitl's rules (see package endpoint).
func init() { endpoint.Provider = providerOf }

// providerOf returns the provider detect tells for r and the Azure OpenAI deployment its path
// names; "" for both when detect does not recognise r.
func providerOf(r *http.Request) (provider, deployment string) {
	c, ok := detect(r)
	if !ok {
		return "", ""
	}
	return c.provider, c.deployment
}
