package approval_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/batch/signature/signaturetest"
)

// BenchmarkProof100k proves a signed plan of 100,000 rows once and checks each of its rows, as
// a run's sends do. heap-B/proof is what the proof keeps for the run's length (its rows).
func BenchmarkProof100k(b *testing.B) {
	const n = 100_000
	dir := b.TempDir()
	alice := signaturetest.NewKey(b, dir, "alice")
	allowed := signaturetest.WriteAllowedSigners(b, filepath.Join(dir, "allowed_signers"), alice.AllowedLine("alice"))
	statement := []byte("payout-plan v1\nfile-sha256\taaaa\nsheet\t-\n")
	for i := range n {
		statement = fmt.Appendf(statement, "row\t%d\t%q\t%d\t%012d\t%d.%02d\t\"Staff %d\"\n", i+2, ref(i), i%30+1, i*7, i%20000, i%100, i)
	}
	statement = fmt.Appendf(statement, "rows\t%d\tpayable\t%d\trejected\t0\ntotal\tMYR\t0.00\n", n, n)
	sum := sha256.Sum256(statement)
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	until := now.AddDate(0, 0, 7)
	signed := append(append([]byte(nil), statement...), approval.ValidUntilLine(until)...)
	ev := approval.Evidence{Need: 1, Plans: []approval.StoredPlan{{
		Digest:    hex.EncodeToString(sum[:]),
		Statement: statement,
		Signatures: []approval.StoredSignature{{
			Armored:    signaturetest.Sign(b, alice, signature.NamespacePlan, signed),
			ValidUntil: until.Format(time.DateOnly),
		}},
	}}}
	refs, accounts, amounts := make([]string, n), make([]string, n), make([]decimal.Decimal, n)
	for i := range n {
		refs[i], accounts[i] = ref(i), fmt.Sprintf("%012d", i*7)
		amounts[i] = decimal.RequireFromString(fmt.Sprintf("%d.%02d", i%20000, i%100))
	}
	var before, after runtime.MemStats
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		p := approval.Prove(ev, allowed, now)
		for i := range n {
			if err := p.Check(refs[i], int64(i%30+1), accounts[i], amounts[i]); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(p)
	}
	b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "heap-B/proof")
}

func ref(i int) string { return "PERF-" + strconv.Itoa(1_000_000 + i)[1:] }
