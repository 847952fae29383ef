// Package endpoint hands the SDK wrappers httpitl's recognition of a request's provider, so that a
// wrapper that learns its request's URL only once the SDK has built it (openaiitl, anthropicitl)
// records the provider httpitl's transport records for the same request, by one set of rules
// (httpitl's detect and azure.go) rather than a copy of them.
//
// httpitl sets Provider when it is initialised (the rules stay with the transport, which runs them
// on every request, allocation-free); a wrapper that calls Provider imports httpitl, so that it is
// set. The dependency cannot go the other way round without moving httpitl's rules here.
package endpoint

import (
	"context"
	"net/http"

	"github.com/otelitl/itl/otelitl"
)

// Provider returns the gen_ai.provider.name httpitl's transport records for r, a request to a model
// API ("openai", "azure.ai.openai", "aws.bedrock", ...), and the model its URL names (an Azure
// OpenAI deployment, the request model when the body names none; a Bedrock model id; a Gemini or
// Vertex AI model), or "" for either when the request says nothing of it (httpitl does not
// recognise r). It reads only r's method and URL. Nil until httpitl is initialised.
var Provider func(r *http.Request) (provider, model string)

// namedKey holds, in a request's context, the provider a wrapper's WithProvider names.
type namedKey struct{}

// Named returns r marked with provider, which Observe records in place of the one the URL tells:
// what the wrappers' WithProvider middleware does. An empty provider leaves r as it is.
func Named(r *http.Request, provider string) *http.Request {
	if provider == "" {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), namedKey{}, provider))
}

// Observe records on g the provider r goes to when it is not def, the wrapper's own: the one Named
// marked r with, else the one httpitl's transport tells from the URL (Azure OpenAI, Amazon
// Bedrock, Vertex AI); and the model the URL names as the request model, which g keeps only when
// Start had none (an Azure deployment, a Bedrock or Vertex AI model id).
func Observe(g *otelitl.Generation, r *http.Request, def string) {
	provider, model := Provider(r)
	if p, _ := r.Context().Value(namedKey{}).(string); p != "" {
		provider = p
	}
	if provider != "" && provider != def {
		g.SetProvider(provider)
	}
	g.SetRequestModel(model)
}
