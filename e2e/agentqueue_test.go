package e2e

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAgentQueueSurvivesRestart runs the shipped agent.yaml in front of a gateway that is not
// there yet (nothing listens at its address), sends the agent gens generations, waits until the
// agent's exporter has tried to send them and is retrying, and ends the agent: with SIGKILL (a
// node drain's last resort, an OOM kill) or SIGTERM (a deploy). A second agent on the same
// ITL_QUEUE_DIR starts, then the shipped gateway.yaml at the address, and the gateway's backend
// must receive exactly the gens spans, with their TTFTs and gaps as the gateway's connector counted
// them. Before, agent.yaml's queue was in memory: the first agent's spans died with it, the backend
// received none, and nothing but the agent's own counters said so.
//
// Duplicates are possible in general: the queue on disk delivers at least once, so an agent killed
// after the gateway accepted a request but before the agent struck it from the queue sends it again
// after the restart. Not here: the gateway was not listening while the first agent ran, so no
// request reached it before the kill, and the test asserts exactly gens.
func TestAgentQueueSurvivesRestart(t *testing.T) {
	requireE2E(t)
	bin := buildCollector(t)
	ca := newPrivateCA(t)
	srvCert, srvKey := ca.server(t, "gateway")
	for _, c := range []struct {
		name string
		sig  syscall.Signal
	}{{"SIGKILL", syscall.SIGKILL}, {"SIGTERM", syscall.SIGTERM}} {
		t.Run(c.name, func(t *testing.T) {
			const gens, chunks = 40, 12
			const ttft, gaps = "gen_ai.client.operation.time_to_first_chunk", "gen_ai.client.operation.time_per_output_chunk"
			hs, backend := startHTTPSink(t)
			gwAddr := freePort(t) // nothing listens there until the gateway starts
			env := []string{"OTLP_ENDPOINT=" + gwAddr, "OTLP_TOKEN=" + gatewayToken, "OTLP_CA_FILE=" + ca.file, "ITL_QUEUE_DIR=" + t.TempDir()}

			first, ports := startAgent(t, bin, "agent.yaml", env)
			sendGenerations(t, ports.grpc, "queued", gens, chunks)
			waitExportFailure(t, first, "connection refused", 30*time.Second)
			if t.Failed() {
				return
			}
			_ = first.cmd.Process.Signal(c.sig)
			select {
			case <-first.done:
			case <-time.After(30 * time.Second):
				t.Fatalf("the agent did not exit within 30s of %s", c.name)
			}
			// At SIGTERM the exporter logs the request it was retrying as dropped, which agent.yaml's
			// comments say is not so: it stays in the queue.
			if b, _ := os.ReadFile(first.log); c.sig == syscall.SIGTERM && !strings.Contains(string(b), "interrupted due to shutdown") {
				t.Errorf("the agent's log at SIGTERM does not say a request in flight was interrupted (agent.yaml's comments say it does)")
			}

			second, ports2 := startAgent(t, bin, "agent.yaml", env)
			startGateway(t, bin, "gateway", srvCert, srvKey, backend, t.TempDir(), "GATEWAY_GRPC_ENDPOINT="+gwAddr)
			arrived := waitFor(90*time.Second, func() bool {
				hs.mu.Lock()
				defer hs.mu.Unlock()
				return hs.spans >= gens && hs.counts[ttft] >= gens && hs.counts[gaps] >= gens*(chunks-1)
			})
			time.Sleep(3 * time.Second) // a duplicate would come now: the gateway flushes every second
			hs.mu.Lock()
			spans, ttfts, gapObs := hs.spans, hs.counts[ttft], hs.counts[gaps]
			hs.mu.Unlock()
			if !arrived || spans != gens || ttfts != gens || gapObs != gens*(chunks-1) {
				t.Errorf("after the agent's %s and restart the gateway's backend has %d spans, %d TTFTs and %d gaps; want %d, %d and %d (arrived within 90s: %v)",
					c.name, spans, ttfts, gapObs, gens, gens, gens*(chunks-1), arrived)
			}
			// The second agent took nothing from an application: what it sent, it read from the
			// queue the first left on disk.
			if sent := telemetry(t, ports2.telemetry, "otelcol_exporter_sent_spans", "")[""]; sent != gens {
				t.Errorf("the restarted agent's otelcol_exporter_sent_spans is %v, want %d", sent, gens)
			}
			if took := telemetry(t, ports2.telemetry, "otelcol_receiver_accepted_spans", "")[""]; took != 0 {
				t.Errorf("the restarted agent's receiver accepted %v spans, want 0", took)
			}
			_ = second
		})
	}
}
