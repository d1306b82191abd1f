package api_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/payout/payout/api"
)

// countingServer counts the TCP connections the client opens.
func countingServer(tb testing.TB) (*httptest.Server, *atomic.Int32) {
	tb.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(reply(200, `{"status":"ok","code":2000,"data":{"payout_invoice_no":"I","value":"1.00","transaction_status":"PENDING"}}`))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv, &conns
}

func TestConnectionsReusedAcrossWorkers(t *testing.T) {
	t.Parallel()
	const workers, perWorker = 8, 40
	srv, conns := countingServer(t)
	c, err := api.NewClient(api.Config{BaseURL: srv.URL, AuthToken: testToken, MaxConns: workers})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for range workers {
		wg.Go(func() {
			for range perWorker {
				if _, err := c.CreatePayout(context.Background(), sampleRequest()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// With Go's default of 2 idle connections per host, 8 workers open a new socket for most
	// requests; with MaxIdleConnsPerHost >= workers they share a handful.
	if n := conns.Load(); n > 2*workers {
		t.Fatalf("%d connections for %d requests by %d workers", n, workers*perWorker, workers)
	}
}

func BenchmarkCreatePayoutParallel(b *testing.B) {
	srv, conns := countingServer(b)
	c, err := api.NewClient(api.Config{BaseURL: srv.URL, AuthToken: testToken, MaxConns: 8})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	b.SetParallelism(4) // 4 × GOMAXPROCS goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.CreatePayout(context.Background(), sampleRequest()); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(conns.Load()), "conns")
}
