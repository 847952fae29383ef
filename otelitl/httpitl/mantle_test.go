package httpitl

import (
	"net/http"
	"net/url"
	"testing"
)

// TestDetectBedrockMantle: Anthropic's Messages API on Amazon Bedrock's Mantle endpoint
// (bedrock-mantle.REGION.api.aws/anthropic/v1/messages, anthropic-sdk-go's bedrock.NewMantleClient)
// is Bedrock's, aws.bedrock, in any case, with a port or the root's dot; look-alikes and other
// hosts stay anthropic. It was anthropic whatever the host.
func TestDetectBedrockMantle(t *testing.T) {
	for _, tc := range []struct{ url, provider string }{
		{"https://bedrock-mantle.us-east-1.api.aws/anthropic/v1/messages", providerBedrock},
		{"https://Bedrock-Mantle.EU-WEST-1.API.AWS/anthropic/v1/messages", providerBedrock},
		{"https://bedrock-mantle.us-west-2.api.aws.:443/anthropic/v1/messages", providerBedrock},
		{"https://bedrock-mantle.us-west-2.api.aws:/anthropic/v1/messages", providerBedrock},
		{"https://api.anthropic.com/v1/messages", providerAnthropic},
		{"https://bedrock-mantle.us-east-1.api.aws.example.com/anthropic/v1/messages", providerAnthropic},
		{"https://xbedrock-mantle.us-east-1.api.aws/anthropic/v1/messages", providerAnthropic},
		{"https://bedrock-mantle.api.aws/anthropic/v1/messages", providerAnthropic},
		{"https://bedrock-mantle.a.b.api.aws/anthropic/v1/messages", providerAnthropic},
		{"https://[::1]:8443/v1/messages", providerAnthropic},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := detect(&http.Request{Method: http.MethodPost, URL: u})
		if !ok || c.proto != protoAnthropic || c.provider != tc.provider {
			t.Errorf("%s: %+v, %t; want the Messages API of %s", tc.url, c, ok, tc.provider)
		}
	}
}
