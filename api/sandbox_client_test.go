package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/internal/fakeclock"
)

// sandboxClient is the real client talking HTTP to the project's sandbox on 127.0.0.1.
func sandboxClient(tb testing.TB, opts sandbox.Options) (*api.Client, *sandbox.Server, *httptest.Server) {
	tb.Helper()
	opts.AuthToken, opts.HashKey = "sb-token", []byte("sb-hash-key")
	if opts.Now == nil {
		// One rate-limit window of the sandbox, never moved.
		opts.Now = fakeclock.New(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)).Now
	}
	opts.SettleInterval = -1
	sb := sandbox.New(opts)
	ts := httptest.NewServer(sb)
	tb.Cleanup(func() {
		ts.Close()
		sb.Close()
	})
	c, err := api.NewClient(api.Config{BaseURL: ts.URL, AuthToken: "sb-token", Timeout: 5 * time.Second, MaxConns: 4})
	if err != nil {
		tb.Fatal(err)
	}
	return c, sb, ts
}

func payoutRequest(ref string) api.CreatePayoutRequest {
	return api.CreatePayoutRequest{VirtualPoolReference: "POOL-1", PayoutServiceID: 1, Amount: decimal.RequireFromString("1250.50"),
		ClientRedirectURL: "http://127.0.0.1:1/return", ClientCallbackURL: "http://127.0.0.1:1/callback",
		ThirdPartyAccountNo: "0012345678", RecipientReference: "Siti binti Ahmad", PaymentDescription: "Gaji", ExternalInvoiceRef: ref}
}

func TestClientAgainstSandbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("every endpoint", func(t *testing.T) {
		c, sb, _ := sandboxClient(t, sandbox.Options{})
		providers, err := c.ListProviders(ctx)
		if err != nil || len(providers) != len(sandbox.DefaultProviders()) {
			t.Fatalf("providers %d, %v", len(providers), err)
		}
		created, err := c.CreatePayout(ctx, payoutRequest("SB/1 x"))
		if err != nil || created.InvoiceNo == "" || created.TransactionStatus != api.StatusPending {
			t.Fatalf("create %+v, %v", created, err)
		}
		byRef, err := c.GetPayout(ctx, "SB/1 x")
		if err != nil || byRef.PayoutInvoiceNo != created.InvoiceNo || !byRef.Value.Equal(decimal.RequireFromString("1250.50")) ||
			byRef.PayoutAccountNumber != "0012345678" {
			t.Fatalf("get by reference %+v, %v", byRef, err)
		}
		byInvoice, err := c.GetPayout(ctx, created.InvoiceNo)
		if err != nil || byInvoice.ExternalInvoiceRef != "SB/1 x" {
			t.Fatalf("get by invoice %+v, %v", byInvoice, err)
		}
		if n := sb.CreateCounts()["SB/1 x"]; n != 1 {
			t.Errorf("%d creates", n)
		}
	})

	classes := []struct {
		name  string
		opts  sandbox.Options
		token string // the client's, when not the one the sandbox wants
		call  func(c *api.Client) error
		want  api.Kind
		then  func(t *testing.T, sb *sandbox.Server)
	}{
		{"unknown reference is not found", sandbox.Options{}, "",
			func(c *api.Client) error { _, err := c.GetPayout(ctx, "NOPE-1"); return err }, api.KindNotFound, nil},
		{"invalid body is rejected", sandbox.Options{}, "",
			func(c *api.Client) error {
				req := payoutRequest("BAD-1")
				req.PayoutServiceID = 999
				_, err := c.CreatePayout(ctx, req)
				return err
			}, api.KindRejected,
			func(t *testing.T, sb *sandbox.Server) {
				if sb.Stats().Creates != 0 {
					t.Error("a rejected create created a payout")
				}
			}},
		{"a repeated reference refused as duplicate", sandbox.Options{DuplicatePolicy: sandbox.RejectDuplicates}, "",
			func(c *api.Client) error {
				if _, err := c.CreatePayout(ctx, payoutRequest("DUP-1")); err != nil {
					return err
				}
				_, err := c.CreatePayout(ctx, payoutRequest("DUP-1"))
				return err
			}, api.KindDuplicate, nil},
		{"lost response: created, outcome unknown", sandbox.Options{Faults: sandbox.Faults{LostResponseRate: 1}}, "",
			func(c *api.Client) error { _, err := c.CreatePayout(ctx, payoutRequest("LOST-1")); return err }, api.KindOutcomeUnknown,
			func(t *testing.T, sb *sandbox.Server) {
				if sb.CreateCounts()["LOST-1"] != 1 {
					t.Error("the lost create did not create the payout")
				}
			}},
		{"503 before creating: outcome unknown on create", sandbox.Options{Faults: sandbox.Faults{ErrorRate: 1}}, "",
			func(c *api.Client) error { _, err := c.CreatePayout(ctx, payoutRequest("E-1")); return err }, api.KindOutcomeUnknown, nil},
		{"503 on a read: retryable", sandbox.Options{Faults: sandbox.Faults{ErrorRate: 1}}, "",
			func(c *api.Client) error { _, err := c.GetPayout(ctx, "E-1"); return err }, api.KindRetryable, nil},
		{"wrong token: unauthorized", sandbox.Options{}, "wrong-token",
			func(c *api.Client) error { _, err := c.ListProviders(ctx); return err }, api.KindUnauthorized, nil},
	}
	for _, tt := range classes {
		t.Run(tt.name, func(t *testing.T) {
			c, sb, ts := sandboxClient(t, tt.opts)
			if tt.token != "" {
				var err error
				if c, err = api.NewClient(api.Config{BaseURL: ts.URL, AuthToken: tt.token}); err != nil {
					t.Fatal(err)
				}
			}
			err := tt.call(c)
			if got := api.KindOf(err); got != tt.want {
				t.Fatalf("kind %v (%v), want %v", got, err, tt.want)
			}
			if strings.Contains(err.Error(), "sb-token") || strings.Contains(err.Error(), "wrong-token") {
				t.Errorf("error shows the token: %v", err)
			}
			if tt.then != nil {
				tt.then(t, sb)
			}
		})
	}

	t.Run("429 storm: rate limited with the wait, nothing created", func(t *testing.T) {
		c, sb, _ := sandboxClient(t, sandbox.Options{Faults: sandbox.Faults{RateLimit: 3}})
		var limited int
		for i := 0; i < 20; i++ {
			_, err := c.CreatePayout(ctx, payoutRequest(fmt.Sprintf("RL-%02d", i)))
			if api.KindOf(err) == api.KindRateLimited {
				limited++
				var apiErr *api.Error
				if !errors.As(err, &apiErr) || apiErr.RetryAfter != time.Second {
					t.Errorf("429 without its Retry-After: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if limited != 17 || sb.Stats().Creates != 3 {
			t.Errorf("%d rate limited, %d created; want 17 and 3", limited, sb.Stats().Creates)
		}
	})

	t.Run("service gone: retryable, nothing reached it", func(t *testing.T) {
		c, sb, ts := sandboxClient(t, sandbox.Options{})
		ts.Close()
		_, err := c.CreatePayout(ctx, payoutRequest("GONE-1"))
		if api.KindOf(err) != api.KindRetryable {
			t.Fatalf("kind %v (%v), want retryable", api.KindOf(err), err)
		}
		if sb.Stats().Creates != 0 {
			t.Error("created")
		}
	})

	t.Run("create answer without invoice number", func(t *testing.T) {
		c, _, _ := sandboxClient(t, sandbox.Options{OmitInvoiceInCreate: true})
		created, err := c.CreatePayout(ctx, payoutRequest("OMIT-1"))
		if err != nil || created.InvoiceNo != "" {
			t.Fatalf("create %+v, %v", created, err)
		}
		got, err := c.GetPayout(ctx, "OMIT-1")
		if err != nil || got.PayoutInvoiceNo == "" {
			t.Fatalf("lookup %+v, %v", got, err)
		}
	})
}
