package main_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const zerosHeader = "external_invoice_ref,recipient_reference,bank,third_party_account_no,amount\n"

// A payee paid at 0012345678 is held, not paid again, at 12345678: same bank, same amount.
func TestAnAccountPaidWithLeadingZerosIsHeldWithoutThem(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	first, second := filepath.Join(u.dir, "first.csv"), filepath.Join(u.dir, "second.csv")
	os.WriteFile(first, []byte(zerosHeader+"LZ-1,Aminah binti Ali,Maybank,0012345678,250.00\n"), 0o600)
	os.WriteFile(second, []byte(zerosHeader+"LZ-2,Aminah binti Ali,Maybank,12345678,250.00\n"), 0o600)
	if out, errOut, code := u.run("run", first); code != 0 {
		t.Fatalf("first file: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code := u.run("run", second)
	if code != 3 || !strings.Contains(out+errOut, "held as a possible repeat") ||
		!strings.Contains(out+errOut, "account 0012345678 there, 12345678 here: they differ only in leading zeros") {
		t.Errorf("the same payee without leading zeros: exit %d, want 3 and the hold: %s %s", code, out, errOut)
	}
	if n := sb.CreateCounts()["LZ-2"]; n != 0 {
		t.Fatalf("LZ-2 was sent %d times while held", n)
	}
	// The held run's evidence pack checks out: a held row has no events, and says so.
	var held struct {
		RunID string `json:"run_id"`
	}
	if out, _, _ := u.run("run", "--json", second); json.Unmarshal([]byte(out), &held) != nil || held.RunID == "" {
		t.Fatalf("run --json of the held file: %s", out)
	}
	exportPack(t, u, held.RunID, "held.zip")
	// A hold, not a refusal: said to be meant, it pays.
	if out, errOut, code := u.run("run", "--allow-repeat", "LZ-2", second); code != 0 || sb.CreateCounts()["LZ-2"] != 1 {
		t.Errorf("LZ-2 allowed: exit %d, created %d times: %s %s", code, sb.CreateCounts()["LZ-2"], out, errOut)
	}

	// Within one file too.
	both := filepath.Join(u.dir, "both.csv")
	os.WriteFile(both, []byte(zerosHeader+"LZ-3,Tan,Maybank,000777888,10.00\nLZ-4,Tan,Maybank,777888,10.00\n"), 0o600)
	if out, errOut, code := u.run("run", both); code != 3 || !strings.Contains(out+errOut, "held as a possible repeat") {
		t.Errorf("one file paying 000777888 and 777888: exit %d: %s %s", code, out, errOut)
	}
}

// A retry file opened and saved in a spreadsheet loses its leading zeros: its row is refused,
// with the line and both accounts, and nothing is paid. The retry file guards formulas.
func TestARetryFileThatLostItsLeadingZerosPaysNothing(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	u := newUser(t, sb)
	input := filepath.Join(u.dir, "payroll.csv")
	// The service refuses amounts over its limit: both rows fail and go to the retry file.
	os.WriteFile(input, []byte(zerosHeader+"LZ-001,Nur Iman,Maybank,000123456000,2000000.00\n"+
		"LZ-002,=TODAY(),Maybank,000123456001,2000000.00\n"), 0o600)
	out, errOut, code := u.run("run", "--json", input)
	var res struct {
		RetryFile string `json:"retry_file"`
	}
	if code != 4 || json.Unmarshal([]byte(out), &res) != nil || res.RetryFile == "" {
		t.Fatalf("run exit %d, want 4 and a retry file: %s %s", code, out, errOut)
	}
	retry := filepath.Join(u.dir, res.RetryFile)
	written := readFile(t, retry)
	if !strings.Contains(written, "LZ-002-R1,'=TODAY(),") || !strings.Contains(written, "LZ-001-R1,Nur Iman,Maybank (Malayan Banking Berhad),000123456000,") {
		t.Fatalf("retry file: want the formula guarded and the accounts as recorded:\n%s", written)
	}

	// What a spreadsheet saves: the account numbers without their zeros.
	recs, err := csv.NewReader(strings.NewReader(written)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		r[3] = strings.TrimLeft(r[3], "0")
	}
	writeRecords(t, retry, recs)
	out, errOut, code = u.run("run", retry)
	for _, want := range []string{"line 2", "account 123456000 here, 000123456000 in LZ-001, the payout it retries (a spreadsheet may have dropped leading zeros)",
		"line 3", "account 123456001 here, 000123456001 in LZ-002"} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("retry file without leading zeros: exit %d, output lacks %q: %s %s", code, want, out, errOut)
		}
	}
	if code != 3 || sb.CreateCounts()["LZ-001-R1"]+sb.CreateCounts()["LZ-002-R1"] != 0 {
		t.Errorf("retry file without leading zeros: exit %d, want 3, and created %v", code, sb.CreateCounts())
	}

	// Run as written, the guarded name is read back without its guard.
	if err := os.WriteFile(retry, []byte(written), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := u.run("run", retry); code != 4 { // refused again: the amount is still over the limit
		t.Fatalf("retry file as written: exit %d: %s %s", code, out, errOut)
	}
	if out, _, _ := u.run("status", "LZ-002-R1"); !strings.Contains(out, "=TODAY()") || strings.Contains(out, "'=TODAY()") {
		t.Errorf("status LZ-002-R1: want the name =TODAY() as the file had it:\n%s", out)
	}
}
