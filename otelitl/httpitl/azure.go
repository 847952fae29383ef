package httpitl

import (
	"net/url"
	"strings"
)

// Azure's services, as the labels before a cloud's domain (azure.com, azure.us, azure.cn: the
// public cloud, Azure Government, Azure China) name them. See doc.go.
const (
	azureOpenAIService    = ".openai"            // an Azure OpenAI resource, NAME.openai.azure.com
	azureCognitiveService = ".cognitiveservices" // an Azure AI services resource
	azureFoundryService   = ".services.ai"       // an Azure AI services or Foundry resource
)

// azureServerlessHosts are the labels before azure.com of the Azure AI model inference API's
// serverless endpoints, NAME.REGION.models.ai.azure.com and NAME.REGION.inference.ai.azure.com, in
// the public cloud only. See doc.go.
var azureServerlessHosts = [...]string{".models.ai", ".inference.ai"}

// azureKind is what a host name says of the Azure service behind it.
type azureKind uint8

const (
	azureNone       azureKind = iota
	azureResource             // an Azure OpenAI, AI services or Foundry resource's host (not serverless)
	azureFoundry              // NAME.services.ai.azure.com (and the other clouds'): also azureResource
	azureServerless           // an Azure AI model inference API serverless endpoint
)

// Paths of Azure's APIs.
const (
	azureDeployments = "/openai/deployments/" // /openai/deployments/{deployment}/chat/completions
	azureProjects    = "/api/projects/"       // /api/projects/{project}/openai/v1/responses
	azureModels      = "/models/"             // /models/chat/completions, the model inference API
)

// openAI completes c, a call of one of OpenAI's paths, for Azure. It is Azure OpenAI's
// (azure.ai.openai) for a path under /openai/deployments/{deployment}/ on any host (a gateway in
// front of Azure keeps Azure's paths), or for a path under /openai/ or under a Foundry project's
// /api/projects/{project}/openai/ on an Azure OpenAI, AI services or Foundry resource's host (the
// v1 API, /openai/v1/chat/completions, and the Responses API, /openai/responses, whose paths name
// no deployment). It is the Azure AI model inference API's (azure.ai.inference) for a path under
// /models/ on a Foundry resource's host, or any path on a serverless endpoint's host, whose first
// label names its deployment. path is u's path without a trailing '/', and ends with op, the
// operation's path (/chat/completions): the deployment is the segment after /openai/deployments/,
// before op. It allocates nothing: it runs on every OpenAI request.
func openAI(u *url.URL, path, op string, c call) call {
	if i := strings.Index(path, azureDeployments); i >= 0 && i+len(azureDeployments) < len(path)-len(op) {
		d, _, _ := strings.Cut(path[i+len(azureDeployments):len(path)-len(op)], "/")
		if d != "" {
			c.provider, c.deployment = providerAzure, d
			return c
		}
	}
	kind, name := azureHost(u.Host)
	switch kind {
	case azureNone:
	case azureServerless:
		c.provider, c.deployment = providerInference, name
	default:
		if strings.HasPrefix(path, "/openai/") || azureProjectPath(path) {
			c.provider = providerAzure
		} else if kind == azureFoundry && strings.HasPrefix(path, azureModels) {
			c.provider = providerInference
		}
	}
	return c
}

// azureProjectPath reports whether path is under a Foundry project's OpenAI API,
// /api/projects/{project}/openai/..., the project one whole non-empty segment.
func azureProjectPath(path string) bool {
	rest, ok := strings.CutPrefix(path, azureProjects)
	if !ok {
		return false
	}
	i := strings.IndexByte(rest, '/')
	return i > 0 && strings.HasPrefix(rest[i:], "/openai/")
}

// azureHost says what hostport, a URL's host with or without its port, is of Azure's: an Azure
// OpenAI, AI services or Foundry resource's (NAME.openai.azure.com,
// NAME.cognitiveservices.azure.com, NAME.services.ai.azure.com, the last azureFoundry, in any of
// Azure's clouds: azure.com, azure.us, azure.cn), or a serverless model inference endpoint's
// (NAME.REGION.models.ai.azure.com, NAME.REGION.inference.ai.azure.com), with name its deployment,
// NAME, when the host has exactly those two labels before the suffix. Each name is matched as a
// whole suffix after at least one byte, in any case, with or without the root's trailing dot: a
// look-alike (evil-openai.azure.com.example.org, xopenai.azure.com,
// models.ai.azure.com.evil.example) is not Azure's. A host outside Azure's domains is told by two
// looks at its last labels, without comparing any suffix: this runs on every OpenAI request.
func azureHost(hostport string) (kind azureKind, name string) {
	labels, cloud, ok := azureDomain(hostport)
	if !ok {
		return azureNone, ""
	}
	if cloud == "com" {
		for _, s := range azureServerlessHosts {
			if rest, ok := cutSuffixFold(labels, s); ok {
				if d, region, ok := strings.Cut(rest, "."); ok && d != "" && region != "" && !strings.Contains(region, ".") {
					name = d
				}
				return azureServerless, name
			}
		}
	}
	if _, ok := cutSuffixFold(labels, azureFoundryService); ok {
		return azureFoundry, ""
	}
	if _, ok := cutSuffixFold(labels, azureOpenAIService); ok {
		return azureResource, ""
	}
	if _, ok := cutSuffixFold(labels, azureCognitiveService); ok {
		return azureResource, ""
	}
	return azureNone, ""
}

// azureDomain cuts hostport's port and the root's trailing dot, and reports whether the host is
// under one of Azure's clouds' domains, azure.com, azure.us or azure.cn, in any case: labels is
// what comes before, cloud the top-level label, lower-cased. It looks only at the end of the host:
// a host that ends in neither a digit nor a colon has no port to look for (an empty port,
// host:, which url.Parse keeps and net/http dials as the scheme's, is cut too), and one that is
// not Azure's is told by a byte or two (api.openai.com's "openai" is not "azure").
func azureDomain(hostport string) (labels, cloud string, ok bool) {
	host := hostport
	if n := len(host); n > 0 && ('0' <= host[n-1] && host[n-1] <= '9' || host[n-1] == ':') {
		if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.IndexByte(host[i:], ']') < 0 {
			host = host[:i]
		}
	}
	host = strings.TrimSuffix(host, ".")
	n := len(host)
	switch {
	case n > 4 && host[n-4] == '.':
		cloud = host[n-3:]
	case n > 3 && host[n-3] == '.':
		cloud = host[n-2:]
	default:
		return "", "", false
	}
	m := n - len(cloud) - len(".azure.")
	if m < 0 || !asciiFold(host[m:m+len(".azure")], ".azure") {
		return "", "", false
	}
	switch {
	case asciiFold(cloud, "com"):
		cloud = "com"
	case asciiFold(cloud, "us"):
		cloud = "us"
	case asciiFold(cloud, "cn"):
		cloud = "cn"
	default:
		return "", "", false
	}
	return host[:m], cloud, true
}

// asciiFold reports whether s is lower, an ASCII string without upper-case letters, in any case.
func asciiFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// cutSuffixFold returns s without suffix, matched in any case, and whether s ended with it after
// at least one byte.
func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) <= len(suffix) || !strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return "", false
	}
	return s[:len(s)-len(suffix)], true
}
