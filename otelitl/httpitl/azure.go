package httpitl

import (
	"net/url"
	"strings"
)

// azureHosts are the host name suffixes of Azure OpenAI's endpoints: a resource of its own
// (NAME.openai.azure.com), an Azure AI services or Foundry resource
// (NAME.cognitiveservices.azure.com, NAME.services.ai.azure.com). See doc.go.
var azureHosts = [...]string{".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com"}

// azureDeployments begins a deployment's path: /openai/deployments/{deployment}/chat/completions.
const azureDeployments = "/openai/deployments/"

// openAI completes c, a call of one of OpenAI's paths, for Azure OpenAI: a path under
// /openai/deployments/{deployment}/ on any host (a gateway in front of Azure keeps Azure's paths),
// or a path under /openai/ on an Azure host (the v1 API, /openai/v1/chat/completions, and the
// Responses API, /openai/responses). path is u's path without a trailing '/', and ends with op,
// the operation's path (/chat/completions): the deployment is the segment after
// /openai/deployments/, before op. It allocates nothing: it runs on every OpenAI request.
func openAI(u *url.URL, path, op string, c call) call {
	if i := strings.Index(path, azureDeployments); i >= 0 && i+len(azureDeployments) < len(path)-len(op) {
		d, _, _ := strings.Cut(path[i+len(azureDeployments):len(path)-len(op)], "/")
		if d != "" {
			c.provider, c.deployment = providerAzure, d
			return c
		}
	}
	if strings.HasPrefix(path, "/openai/") && azureHost(u.Hostname()) {
		c.provider = providerAzure
	}
	return c
}

// azureHost reports whether host, a URL's host name without its port, is one of Azure OpenAI's
// (azureHosts): a name with at least one label before the suffix, in any case, with or without
// the root's trailing dot. A look-alike (evil-openai.azure.com.example.org, xopenai.azure.com) is
// not.
func azureHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	for _, s := range azureHosts {
		if len(host) > len(s) && strings.EqualFold(host[len(host)-len(s):], s) {
			return true
		}
	}
	return false
}
