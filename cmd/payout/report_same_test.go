package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api/sandbox"
)

// TestCommandReportSameAsTheRunsOwn: `payout report RUN` writes, byte for byte, the result CSV the
// run wrote when it ended, for a run that paid, one that needs attention (a refused payout, a
// rejected row, a row another file paid, a pending one) and one whose file was rejected.
func TestCommandReportSameAsTheRunsOwn(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Options{AuthToken: "e2e-token", HashKey: []byte("e2e-hash-key"),
		FailSuffixes: sandbox.DefaultFailSuffixes, MaxAmount: decimal.NewFromInt(1000)})
	t.Cleanup(sb.Close)
	u := newUser(t, sb)
	header := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n"
	files := []struct {
		name, body string
		flags      []string
		exit       int
	}{
		{"first.csv", header + "SAME-1,Ali,Maybank,000181590832,100.00,Gaji\n", nil, 0},
		{"second.csv", header +
			"SAME-1,Ali,Maybank,000181590832,100.00,Gaji\n" + // paid by first.csv
			"SAME-2,Abu,Maybank,000181591000,20.00,Gaji\n" + // pending: it fails later
			"SAME-3,Chong,Maybank,000181590834,1.005,Gaji\n" + // rejected: three decimals
			"SAME-4,Devi,CIMB Bank Berhad,030824628194,\"RM 7,674.72\",Gaji\n", // over the sandbox's limit: refused
			[]string{"--allow-partial"}, 4},
		{"rejected.csv", header +
			"SAME-5,Ali,Maybank,000181590835,5.00,Gaji\n" +
			"SAME-6,Abu,Bank of Atlantis,000181590836,6.00,Gaji\n", nil, 3},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(u.dir, f.name), []byte(f.body), 0o600); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{"run", "--json"}, f.flags...), f.name)
		out, errOut, code := u.run(args...)
		if code != f.exit {
			t.Fatalf("%s: exit %d, want %d: %s %s", f.name, code, f.exit, out, errOut)
		}
		var res struct {
			RunID   string   `json:"run_id"`
			Reports []string `json:"reports"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.RunID == "" {
			t.Fatalf("%s: --json printed %q: %v", f.name, out, err)
		}
		own := readResultCSV(t, u.dir, res.Reports)
		out, errOut, code = u.run("report", res.RunID)
		if code != 0 {
			t.Fatalf("%s: report exit %d: %s %s", f.name, code, out, errOut)
		}
		again := readResultCSV(t, u.dir, strings.Fields(out))
		if !bytes.Equal(own, again) {
			t.Errorf("%s: `payout report %s` differs from the run's own CSV\nrun:\n%s\nreport:\n%s", f.name, res.RunID, own, again)
		}
		if len(bytes.Split(bytes.TrimSpace(own), []byte("\n"))) < 2 {
			t.Errorf("%s: the result CSV has no rows:\n%s", f.name, own)
		}
	}
}

// readResultCSV reads the result CSV among paths (relative to dir when not absolute).
func readResultCSV(t *testing.T, dir string, paths []string) []byte {
	t.Helper()
	for _, p := range paths {
		if !strings.HasSuffix(p, ".result.csv") {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatalf("no result CSV among %q", paths)
	return nil
}
