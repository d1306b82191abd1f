package main_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/ledger"
)

// TestCommandTotalsTieOutToTheFile: a file whose amounts carry thousands separators in a held
// repeat, a rejected row and a paid one, and one amount that is no number, reports the file's
// total (every readable amount, whatever its row's state) in --json, the summary line, and the
// CSV, XLSX and HTML reports of the refused run, the --allow-partial run, its rerun, `payout
// report` and `payout reconcile --run`; the amounts by state add up to it, and the unreadable
// row is named apart.
func TestCommandTotalsTieOutToTheFile(t *testing.T) {
	t.Parallel()
	u := newUser(t, newSandbox(t))
	header := "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount,payment_description\n"
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(u.dir, name), []byte(header+body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first.csv", "TIE-0,Ali,Maybank,000181590832,\"RM 1,250.00\",Gaji\n")
	if out, errOut, code := u.run("run", "first.csv"); code != 0 {
		t.Fatalf("first.csv: exit %d: %s %s", code, out, errOut)
	}
	write("tie.csv", ""+
		"TIE-1,Ali,Maybank,000181590832,\"1,250.00\",Gaji\n"+ // held: repeats TIE-0
		"TIE-2,Abu,Maybank,000181590833,\"2,380.00\",Gaji\n"+ // paid
		"TIE-3,Chong,Bank of Atlantis,000181590834,\"1,150.00\",Gaji\n"+ // rejected: no such bank
		"TIE-4,Devi,Maybank,000181590835,100.51,Gaji\n"+ // paid
		"TIE-5,Eva,Maybank,000181590836,\"1.250,00\",Gaji\n") // no number: counted apart
	const fileTotal = "4880.51"
	refusedStates := map[string]string{"REJECTED": "2400.00", "READY": "2480.51"} // nothing was sent
	partial := map[string]string{"REJECTED": "2400.00", "SUBMITTED": "2480.51"}

	out, errOut, code := u.run("run", "--json", "tie.csv")
	if code != 3 {
		t.Fatalf("refused run: exit %d, want 3: %s %s", code, out, errOut)
	}
	refused := decodeRun(t, out)
	checkTotals(t, "refused run", u.dir, refused.Reports, refused.Total, refused.Unreadable, fileTotal, refusedStates)

	out, errOut, code = u.run("run", "--json", "--allow-partial", "tie.csv")
	if code != 4 {
		t.Fatalf("--allow-partial: exit %d, want 4: %s %s", code, out, errOut)
	}
	paid := decodeRun(t, out)
	checkTotals(t, "--allow-partial", u.dir, paid.Reports, paid.Total, paid.Unreadable, fileTotal, partial)

	out, errOut, code = u.run("run", "-v", "--allow-partial", "tie.csv")
	if code != 4 {
		t.Fatalf("rerun: exit %d, want 4: %s %s", code, out, errOut)
	}
	if !strings.Contains(out, "5 rows, MYR "+fileTotal+" (and 1 row(s) whose amount is not a number)") {
		t.Errorf("the rerun's summary does not give the file's total:\n%s", out)
	}
	out, errOut, code = u.run("run", "--json", "--allow-partial", "tie.csv")
	if code != 4 {
		t.Fatalf("rerun --json: exit %d, want 4: %s %s", code, out, errOut)
	}
	again := decodeRun(t, out)
	checkTotals(t, "rerun", u.dir, again.Reports, again.Total, again.Unreadable, fileTotal, partial)

	out, errOut, code = u.run("report", paid.RunID)
	if code != 0 {
		t.Fatalf("report: exit %d: %s %s", code, out, errOut)
	}
	checkTotals(t, "payout report", u.dir, strings.Fields(out), fileTotal, 1, fileTotal, partial)

	out, errOut, code = u.run("reconcile", "--json", "--run", paid.RunID)
	if code != 0 && code != 4 {
		t.Fatalf("reconcile: exit %d: %s %s", code, out, errOut)
	}
	recon := decodeRun(t, out)
	checkTotals(t, "reconcile", u.dir, recon.Reports, recon.Total, recon.Unreadable, fileTotal, nil)

	// An evidence pack's reports are checked by the same reading of their amounts.
	if out, errOut, code := u.run("audit", "export", "--run", paid.RunID, "--out", "tie.zip"); code != 0 {
		t.Fatalf("audit export: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := u.run("audit", "verify", "--pack", "tie.zip"); code != 0 || !strings.Contains(out, "intact") {
		t.Errorf("audit verify of the run's pack: exit %d: %s %s", code, out, errOut)
	}

	// A file that pays nothing for want of signatures reports its own total too, not its payable rows'.
	newSigners(t, u)
	if out, errOut, code := u.run("policy", "--approvals", "1"); code != 0 {
		t.Fatalf("policy --approvals 1: exit %d: %s %s", code, out, errOut)
	}
	write("unsigned.csv", strings.ReplaceAll(strings.TrimPrefix(mustRead(t, filepath.Join(u.dir, "tie.csv")), header), "TIE-", "SIGN-"))
	out, errOut, code = u.run("run", "--json", "--allow-partial", "--allow-repeats", "unsigned.csv")
	var unsigned totalsJSON
	if err := json.Unmarshal([]byte(out), &unsigned); code != 5 || err != nil || !decimal.RequireFromString(unsigned.Total).Equal(decimal.RequireFromString(fileTotal)) {
		t.Errorf("unsigned file: exit %d, --json total %q, want 5 and %s: %v %s", code, unsigned.Total, fileTotal, err, errOut)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type totalsJSON struct {
	RunID      string   `json:"run_id"`
	Total      string   `json:"total_amount"`
	Unreadable int      `json:"unreadable_amounts"`
	Reports    []string `json:"reports"`
}

func decodeRun(t *testing.T, out string) totalsJSON {
	t.Helper()
	var res totalsJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Reports) == 0 {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	return res
}

// checkTotals checks one set of reports: the --json total and unreadable count, the CSV's
// amounts, the XLSX summary's total, states and tie-out, and the HTML's total and tie-out.
// byState, when given, holds the amount each listed state must show.
func checkTotals(t *testing.T, what, dir string, reports []string, total string, unreadable int, want string, byState map[string]string) {
	t.Helper()
	wantTotal := decimal.RequireFromString(want)
	if !decimal.RequireFromString(total).Equal(wantTotal) || unreadable != 1 {
		t.Errorf("%s: total %s with %d unreadable amounts, want %s with 1", what, total, unreadable, want)
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	seen := 0
	for _, p := range reports {
		switch {
		case strings.HasSuffix(p, ".retry.csv"), strings.HasSuffix(p, ".retry.xlsx"):
		case strings.HasSuffix(p, ".csv"):
			seen++
			if sum := csvAmountSum(t, abs(p)); !sum.Equal(wantTotal) {
				t.Errorf("%s: %s: the readable amounts add up to %s, want %s", what, p, sum, want)
			}
		case strings.HasSuffix(p, ".xlsx"):
			seen++
			checkXLSXTotals(t, what, abs(p), wantTotal, byState)
		case strings.HasSuffix(p, ".html"):
			seen++
			b, err := os.ReadFile(abs(p))
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			shown := "RM " + wantTotal.StringFixed(2)
			shown = shown[:len(shown)-6] + "," + shown[len(shown)-6:] // RM 4,880.51
			if !strings.Contains(page, `id="total-amount">`+shown+"<") ||
				!strings.Contains(page, "File total "+shown+" = sum by state "+shown+" ✓") {
				t.Errorf("%s: %s does not tie out to %s:\n%s", what, p, shown, regexp.MustCompile(`(?s)<table class="states">.*?</p>`).FindString(page))
			}
			if !strings.Contains(page, "not in the total: line 6") {
				t.Errorf("%s: %s does not name the row whose amount is no number", what, p)
			}
		}
	}
	if seen != 3 {
		t.Errorf("%s: %d reports among %q, want a CSV, an XLSX and an HTML", what, seen, reports)
	}
}

// csvAmountSum adds up the readable amounts of a report CSV's amount column (ledger_amount in
// a reconciliation's).
func csvAmountSum(t *testing.T, path string) decimal.Decimal {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range recs[0] {
		if h == "amount" || h == "ledger_amount" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("%s has no amount column: %q", path, recs[0])
	}
	sum := decimal.Zero
	for _, rec := range recs[1:] {
		if d, ok := ledger.AmountAsWritten(rec[col]); ok {
			sum = sum.Add(d)
		}
	}
	return sum
}

func checkXLSXTotals(t *testing.T, what, path string, want decimal.Decimal, byState map[string]string) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Summary")
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]decimal.Decimal{}
	sum, total := decimal.Zero, decimal.Decimal{}
	tie, unreadable := "", ""
	inStates := false
	for _, r := range rows {
		if len(r) == 0 {
			inStates = false
			continue
		}
		switch {
		case len(r) >= 3 && (r[0] == "State" || r[0] == "Ledger state"):
			inStates = true
		case len(r) >= 3 && r[0] == "Total" && inStates:
			total, _ = ledger.AmountAsWritten(r[2])
			inStates = false
		case len(r) >= 3 && inStates:
			d, _ := ledger.AmountAsWritten(r[2])
			states[r[0]] = d
			sum = sum.Add(d)
		case r[0] == "Tie-out" && len(r) > 1:
			tie = r[1]
		case r[0] == "Unreadable amounts" && len(r) > 1:
			unreadable = r[1]
		}
	}
	if !total.Equal(want) || !sum.Equal(want) {
		t.Errorf("%s: %s: Summary total %s, states add up to %s, want both %s", what, path, total, sum, want)
	}
	if !strings.HasPrefix(tie, "File total ") {
		t.Errorf("%s: %s: the Summary's tie-out says %q", what, path, tie)
	}
	if !strings.Contains(unreadable, "line 6") {
		t.Errorf("%s: %s: the Summary does not name the unreadable amount's line: %q", what, path, unreadable)
	}
	for state, amount := range byState {
		if !states[state].Equal(decimal.RequireFromString(amount)) {
			t.Errorf("%s: %s: %s is %s, want %s", what, path, state, states[state], amount)
		}
	}
}
