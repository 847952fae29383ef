// Package endpoint hands the SDK wrappers httpitl's recognition of a request's provider, so that a
// wrapper that learns its request's URL only once the SDK has built it (openaiitl, anthropicitl)
// records the provider httpitl's transport records for the same request, by one set of rules
// (httpitl's detect and azure.go) rather than a copy of them.
//
// httpitl sets Provider when it is initialised (the rules stay with the transport, which runs them
// on every request, allocation-free); a wrapper that calls Provider imports httpitl, so that it is
// set. The dependency cannot go the other way round without moving httpitl's rules here.
package endpoint

import "net/http"

// Provider returns the gen_ai.provider.name httpitl's transport records for r, a request to a model
// API ("openai", "azure.ai.openai", "aws.bedrock", ...), and the model its URL names (an Azure
// OpenAI deployment, the request model when the body names none; a Bedrock model id; a Gemini or
// Vertex AI model), or "" for either when the request says nothing of it (httpitl does not
// recognise r). It reads only r's method and URL. Nil until httpitl is initialised.
var Provider func(r *http.Request) (provider, model string)
