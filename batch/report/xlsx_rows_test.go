package report

import (
	"archive/zip"
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// xlsxAlphabet mixes what sheetRowsXML writes itself with everything that makes it hand the
// table back to excelize: control characters, "_x" escapes, edge spaces, invalid UTF-8, U+FFFF.
var xlsxAlphabet = []string{"a", "Z", "7", "<", ">", "&", "'", "\"", "=", "+", "-", "@", "é", "李", "😀", "&amp;",
	"_", "x", " ", "\t", "\n", "\r", "\x00", "\x1f", "\xff", "\uffff", "\ufffe", "_x0041_", "_x005F_", "]]>"}

func randomRows(rnd *rand.Rand, n int, alphabet []string) []Row {
	str := func() string {
		var b strings.Builder
		for i := rnd.Intn(7); i > 0; i-- {
			b.WriteString(alphabet[rnd.Intn(len(alphabet))])
		}
		return b.String()
	}
	amounts := []string{"0", "0.01", "1250.5", "-3", "123456789012.34", "99999999999999999.99", "0.001", "1e3"}
	rows := make([]Row, n)
	for i := range rows {
		r := Row{Line: rnd.Intn(100000), Ref: str(), Recipient: str(), ProviderID: int64(rnd.Intn(3)), Bank: str(),
			Account: str(), State: str(), InvoiceNo: str(), TransactionStatus: str(), Message: str()}
		if rnd.Intn(5) == 0 {
			r.AmountText = str()
		} else {
			r.Amount = decimal.RequireFromString(amounts[rnd.Intn(len(amounts))])
		}
		rows[i] = r
	}
	return rows
}

// xlsxParts is a package's parts by name, and their order.
func xlsxParts(t *testing.T, b []byte) (map[string][]byte, []string) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		parts[f.Name] = data
		names = append(names, f.Name)
	}
	return parts, names
}

// sameAsExcelize writes rows both ways and fails unless every part of the two packages is the
// same, byte for byte. It returns whether the rows were written by sheetRowsXML.
func sameAsExcelize(t *testing.T, rows []Row) (spliced bool) {
	t.Helper()
	s := Summarize(Summary{RunID: "R1", Kind: "run", File: "in.csv", Started: time.Unix(0, 0).UTC()}, rows)
	tab := runTable(rows)
	var viaExcelize, viaSplice bytes.Buffer
	if err := writeXLSXRows(&viaExcelize, tab, runSummaryCells(s), false); err != nil {
		t.Fatal(err)
	}
	if err := writeXLSXRows(&viaSplice, tab, runSummaryCells(s), true); err != nil {
		t.Fatal(err)
	}
	want, wantNames := xlsxParts(t, viaExcelize.Bytes())
	got, gotNames := xlsxParts(t, viaSplice.Bytes())
	if strings.Join(gotNames, " ") != strings.Join(wantNames, " ") {
		t.Fatalf("parts %v, excelize wrote %v", gotNames, wantNames)
	}
	for _, name := range wantNames {
		if !bytes.Equal(got[name], want[name]) {
			g, w := got[name], want[name]
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("%s differs from excelize's at byte %d:\n got  %q\n want %q", name, i,
				g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
		}
	}
	_, spliced = sheetRowsXML(tab, styles{})
	return spliced
}

// TestXLSXRowsMatchExcelize checks that the rows written by sheetRowsXML make the same package as
// excelize's StreamWriter, for plain text (written here) and for anything else (handed back).
func TestXLSXRowsMatchExcelize(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	plain := xlsxAlphabet[:16]
	var splicedTables, streamedTables int
	for i := 0; i < 60; i++ {
		alphabet := xlsxAlphabet
		if i%2 == 0 {
			alphabet = plain
		}
		if sameAsExcelize(t, randomRows(rnd, 1+rnd.Intn(40), alphabet)) {
			splicedTables++
		} else {
			streamedTables++
		}
	}
	if splicedTables < 30 || streamedTables == 0 {
		t.Fatalf("%d tables spliced, %d streamed: both paths must be checked", splicedTables, streamedTables)
	}
	if !sameAsExcelize(t, nil) {
		t.Fatal("an empty table should be spliced")
	}
	big := table{header: RunHeader, n: spliceRowsMax + 1, row: func(int, []cell) []cell { return []cell{integer(1)} }}
	if _, ok := sheetRowsXML(big, styles{}); ok {
		t.Fatalf("a table of %d rows should be streamed through excelize, not held in memory", big.n)
	}
	long := Row{Line: 1, Ref: "R", Recipient: strings.Repeat("é", 16384), Amount: decimal.New(1, 0), State: "READY"}
	if sameAsExcelize(t, []Row{long}) {
		t.Fatal("a cell over 32,767 bytes should be left to excelize")
	}
}

// FuzzXLSXRowsMatchExcelize: whatever one cell holds, the package is excelize's.
func FuzzXLSXRowsMatchExcelize(f *testing.F) {
	for _, s := range []string{"", "Ali bin Abu", "=1+1", "_x0041_", " lead", "tab\there", "\xff", "a&b<c>'\"", "\uffff"} {
		f.Add(s, "12.50")
	}
	f.Fuzz(func(t *testing.T, s, amount string) {
		row := Row{Line: 2, Ref: s, Recipient: s, Bank: s, Account: s, State: "SUBMITTED", Message: s, AmountText: amount}
		if d, err := decimal.NewFromString(amount); err == nil {
			row.Amount, row.AmountText = d, ""
		}
		sameAsExcelize(t, []Row{row})
	})
}
