package anthropicitl_test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/bedrock"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/otelitl/itl/internal/wraptest"
	"github.com/otelitl/itl/otelitl/anthropicitl"
	"github.com/otelitl/itl/otelitl/httpitl"
)

// TestBedrockMantleLikeHTTPITL: Claude on Amazon Bedrock's Mantle endpoint, anthropic-sdk-go's
// bedrock.NewMantleClient (Anthropic's Messages API and SSE events at
// https://bedrock-mantle.REGION.api.aws/anthropic/v1/messages), is recorded as aws.bedrock by
// httpitl's transport and by the wrapper alike, with the chunks, usage and end of its stream. Both
// recorded it as anthropic. Every connection goes to a TLS server in the test whatever the host.
func TestBedrockMantleLikeHTTPITL(t *testing.T) {
	srv := wraptest.NewTLSServer(t, events, 0)
	base := srv.Client().Transport.(*http.Transport).Clone()
	addr := srv.Listener.Addr().String()
	base.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	base.TLSClientConfig.ServerName = "example.com" // httptest's certificate's name
	mantle, err := bedrock.NewMantleClient(context.Background(), bedrock.MantleClientConfig{AWSRegion: "us-east-1", SkipAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	attrs := func(wrapped bool) map[string]string {
		in, exp := wraptest.Tracing(t)
		rt := http.RoundTripper(base)
		if !wrapped {
			rt = httpitl.NewTransport(base, httpitl.WithInstrumentation(in))
		}
		c := anthropic.NewClient(append(append([]option.RequestOption{}, mantle.Options...), option.WithHTTPClient(&http.Client{Transport: rt}), option.WithMaxRetries(0))...)
		var s interface {
			Next() bool
			Err() error
			Close() error
		}
		if wrapped {
			s = anthropicitl.NewStreaming(context.Background(), in, &c.Messages, params)
		} else {
			s = c.Messages.NewStreaming(context.Background(), params)
		}
		for s.Next() {
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		return attrsOf(t, exp)
	}
	viaTransport, wrapped := attrs(false), attrs(true)
	checkSame(t, viaTransport, wrapped, map[string]string{"gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": "claude-sonnet-4-5",
		"otelitl.chunk.count": "4", "gen_ai.usage.input_tokens": "25", "gen_ai.usage.output_tokens": "15", "gen_ai.response.finish_reasons": `["end_turn"]`,
		"server.address": "bedrock-mantle.us-east-1.api.aws", "error.type": ""})
	for _, u := range srv.URLs() {
		if u.Path != "/anthropic/v1/messages" {
			t.Errorf("the SDK asked for %s", u.Path)
		}
	}
}
