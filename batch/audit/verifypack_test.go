package audit_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"testing"

	"github.com/payout/payout/batch/audit"
)

// deflatedZeros is n zero bytes, deflated: a few hundred bytes for many megabytes.
func deflatedZeros(tb testing.TB, n int64) ([]byte, uint32) {
	tb.Helper()
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		tb.Fatal(err)
	}
	crc := crc32.NewIEEE()
	if _, err := io.CopyN(io.MultiWriter(fw, crc), zeros{}, n); err != nil {
		tb.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), crc.Sum32()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// bomb is a zip of members, each holding size zero bytes and claiming claim bytes.
func bomb(tb testing.TB, names []string, size, claim int64) []byte {
	tb.Helper()
	data, crc := deflatedZeros(tb, size)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range names {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc,
			CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(claim)})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// allocatedBy is how many bytes of heap fn allocated, in all.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestVerifyPackRefusesABombWithinABoundedHeap(t *testing.T) {
	// Not in parallel: it counts what this process allocates, which tests beside it would add to.
	const size = 24 << 20 // each member inflates to 24 MiB of zeros: three times a member's limit
	lim := audit.PackLimits{Member: 8 << 20, Total: 16 << 20, Members: 100, Payouts: 1000, Small: 1 << 20, XLSX: 4 << 20, Line: 1 << 20}
	names := []string{"events.jsonl", "input/pay.csv", "reports/pay.report.html", "run.json"}
	for _, tc := range []struct {
		name  string
		claim int64
	}{
		{"members that claim what they hold", size},
		{"members that claim less than they hold", 100},
		{"members that claim nothing", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pack := bomb(t, names, size, tc.claim)
			if len(pack) > 1<<20 {
				t.Fatalf("the bomb is %d bytes: not a bomb", len(pack))
			}
			var err error
			alloc := allocatedBy(func() { _, err = audit.VerifyPackWithin(bytes.NewReader(pack), int64(len(pack)), lim) })
			if err == nil {
				t.Fatal("a pack whose members inflate to 4 x 24 MiB was verified")
			}
			if tc.claim > lim.Member && !errors.Is(err, audit.ErrPackTooLarge) {
				t.Errorf("error %v, want ErrPackTooLarge", err)
			}
			// The limits allow 16 MiB of members in all; the heap must stay well below even that,
			// and far below the 96 MiB the members inflate to.
			if alloc > 8<<20 {
				t.Errorf("verifying allocated %d MiB (%v)", alloc>>20, err)
			}
			t.Logf("%v; allocated %d KiB", err, alloc>>10)
		})
	}
}

func TestVerifyPackRefusesOneMemberOverItsLimitWithinTheDefaults(t *testing.T) {
	// Not in parallel: it counts what this process allocates, which tests beside it would add to.
	// Four members that claim 1 GiB each, as a 4 MB pack did: refused before a byte is inflated.
	pack := bomb(t, []string{"a", "b", "c", "d"}, 1<<20, 1<<30)
	var err error
	alloc := allocatedBy(func() { _, err = audit.VerifyPack(bytes.NewReader(pack), int64(len(pack))) })
	if !errors.Is(err, audit.ErrPackTooLarge) {
		t.Fatalf("error %v, want ErrPackTooLarge", err)
	}
	if alloc > 4<<20 {
		t.Errorf("refusing allocated %d MiB", alloc>>20)
	}
}

func TestVerifyPackRefusesMorePayoutsThanItKeeps(t *testing.T) {
	t.Parallel()
	var events bytes.Buffer
	for i := 1; i <= 11; i++ {
		fmt.Fprintf(&events, `{"id":%d,"ref":"R-%d","to_state":"READY"}`+"\n", i, i)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range map[string][]byte{"run.json": []byte(`{"format":"` + audit.PackFormat + `","chain_head":"11:x"}`),
		"events.jsonl": events.Bytes()} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	lim := audit.DefaultPackLimits
	lim.Payouts = 10
	if _, err := audit.VerifyPackWithin(bytes.NewReader(buf.Bytes()), int64(buf.Len()), lim); !errors.Is(err, audit.ErrPackTooLarge) {
		t.Errorf("11 payouts with room for 10: %v, want ErrPackTooLarge", err)
	}
	lim.Payouts = 11
	rep, err := audit.VerifyPackWithin(bytes.NewReader(buf.Bytes()), int64(buf.Len()), lim)
	if err != nil || rep.Payouts != 11 || len(rep.Findings) == 0 {
		t.Errorf("11 payouts with room for 11: %+v, %v; want them read, and the forged events found", rep, err)
	}
}
