package retry_test

import (
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch"
	"github.com/payout/payout/batch/exitcode"
	"github.com/payout/payout/batch/intake"
	"github.com/payout/payout/batch/internal/batchtest"
	"github.com/payout/payout/batch/read"
	"github.com/payout/payout/batch/retry"
	"github.com/payout/payout/ledger"
)

// scriptedService is the sandbox's client, except for the creates of some references: refused
// ones are answered "fail" and created nothing; throttled ones are answered 429 every time.
type scriptedService struct {
	*api.Client
	refuse, throttle map[string]bool
	// loseAnswer, when set, is asked before each create that reaches the client: true lets the
	// create through and loses its answer.
	loseAnswer func(ref string) bool
}

func (s *scriptedService) CreatePayout(ctx context.Context, req api.CreatePayoutRequest) (api.CreateResult, error) {
	switch ref := req.ExternalInvoiceRef; {
	case s.refuse[ref]:
		return api.CreateResult{}, &api.Error{Op: "create payout", HTTPStatus: 200, Status: "fail", Code: sandbox.CodeValidation,
			Message: "payout could not be processed", Kind: api.KindRejected}
	case s.throttle[ref]:
		return api.CreateResult{}, &api.Error{Op: "create payout", HTTPStatus: 429, Message: "too many requests",
			Kind: api.KindRateLimited, RetryAfter: time.Millisecond}
	}
	if s.loseAnswer != nil && s.loseAnswer(req.ExternalInvoiceRef) {
		if _, err := s.Client.CreatePayout(ctx, req); err != nil {
			return api.CreateResult{}, err
		}
		return api.CreateResult{}, errors.New("connection reset by peer")
	}
	return s.Client.CreatePayout(ctx, req)
}

// readCSV reads a CSV file's records.
func readCSV(t *testing.T, path string) [][]string {
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
	return recs
}

// writeCSV writes records as a CSV file.
func writeCSV(t *testing.T, path string, recs [][]string) {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// column is the values of a column of recs (header first), by header name.
func column(t *testing.T, recs [][]string, name string) []string {
	t.Helper()
	i := slices.Index(recs[0], name)
	if i < 0 {
		t.Fatalf("no column %q in %q", name, recs[0])
	}
	var out []string
	for _, rec := range recs[1:] {
		out = append(out, rec[i])
	}
	return out
}

func TestRetryFilePaysExactlyTheUnpaidRows(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	ctx := context.Background()
	header := []string{"Amount", "External Invoice Ref", "Recipient_Reference", "bank", "third_party_account_no", "payment_description", "Note"}
	path := filepath.Join(h.Dir, "payroll.csv")
	writeCSV(t, path, [][]string{header,
		{"100.00", "RT-1", "Aisyah", "Maybank", "0123456781", "Salary", "ok"},
		{"12.345", "RT-2", "Bala", "Maybank", "0123456782", "Salary", "typo"},
		{"300.00", "RT-3", "Chong", "CIMB Bank Berhad", "0123456783", "Salary", "refused"},
		{"400.00", "RT-4", "Devi", "Public Bank", "0123456784", "Salary", ""},
		{"500.00", "RT-5", "Eng", "RHB Bank", "0123456785", "Salary", "throttled"},
	})
	svc := &scriptedService{Client: h.Client, refuse: map[string]bool{"RT-3": true}, throttle: map[string]bool{"RT-5": true}}
	res := h.Run(ctx, path, func(c *batch.Config) { c.Service, c.AllowPartial = svc, true })
	if res.ExitCode != exitcode.Attention || res.Rejected != 1 || res.Failed != 1 || res.NotSent != 1 || res.Succeeded+res.Pending != 2 {
		t.Fatalf("first run: exit %d, rejected %d, failed %d, not sent %d, accepted %d", res.ExitCode, res.Rejected, res.Failed, res.NotSent, res.Succeeded+res.Pending)
	}
	want := filepath.Join(h.Cfg.ReportDir, "payroll."+res.RunID+".retry.csv")
	if res.RetryFile != want || !slices.Contains(res.Reports, want) {
		t.Fatalf("retry file %q (reports %q), want %q", res.RetryFile, res.Reports, want)
	}
	if fi, err := os.Stat(want); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("retry file: %v, %v", fi, err)
	}
	recs := readCSV(t, want)
	if !slices.Equal(recs[0], append(header, retry.Column)) {
		t.Fatalf("header %q, want the input's own and %s", recs[0], retry.Column)
	}
	refs := column(t, recs, "External Invoice Ref")
	if !slices.Equal(refs, []string{"RT-2", "RT-3-R1", "RT-5"}) {
		t.Fatalf("retry file refs %q, want the rejected, the refused under a new reference, the not sent", refs)
	}
	why := column(t, recs, retry.Column)
	for i, prefix := range []string{"rejected: amount", "failed: ", "not sent: "} {
		if !strings.HasPrefix(why[i], prefix) {
			t.Errorf("row %s: why %q, want it to begin %q", refs[i], why[i], prefix)
		}
	}
	if amounts := column(t, recs, "Amount"); !slices.Equal(amounts, []string{"12.345", "300.00", "500.00"}) {
		t.Errorf("amounts %q: the rejected row as read, the others as recorded", amounts)
	}
	if notes := column(t, recs, "Note"); !slices.Equal(notes, []string{"", "", ""}) {
		t.Errorf("notes %q: a column the ledger does not keep is left empty", notes)
	}

	// Written again (as reconcile does), the refused row keeps its derived reference.
	again, err := retry.Write(ctx, h.DB, res.RunID, t.TempDir(), "", false, time.Now(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if refs := column(t, readCSV(t, again.CSV), "External Invoice Ref"); !slices.Equal(refs, []string{"RT-2", "RT-3-R1", "RT-5"}) {
		t.Fatalf("retry file written again: refs %q", refs)
	}

	// The user corrects the rejected row and drops the file in again, as is.
	recs[1][0] = "12.34"
	writeCSV(t, want, recs)
	for round := 1; round <= 2; round++ {
		res := h.Run(ctx, want, nil)
		if res.ExitCode != exitcode.OK || res.RetryFile != "" {
			t.Fatalf("retry run %d: exit %d, retry file %q, problems %v: %+v\n%s", round, res.ExitCode, res.RetryFile, res.Problems, res, batchtest.ReadFile(t, batchtest.ResultCSV(t, res)))
		}
	}
	counts := h.Sandbox.CreateCounts()
	for ref, n := range map[string]int{"RT-1": 1, "RT-2": 1, "RT-3": 0, "RT-3-R1": 1, "RT-4": 1, "RT-5": 1} {
		if counts[ref] != n {
			t.Errorf("%s created %d times, want %d", ref, counts[ref], n)
		}
	}
	if len(counts) != 5 {
		t.Errorf("created %v, want 5 payouts", counts)
	}
	if retries, err := h.DB.Retries(ctx, ledger.RetryFilter{New: []string{"RT-3-R1"}}); err != nil || retries["RT-3-R1"].Old != "RT-3" {
		t.Errorf("RT-3-R1 is recorded as a retry of %+v (%v), want RT-3", retries["RT-3-R1"], err)
	}
	events, err := h.DB.Events(ctx, "RT-3-R1")
	if err != nil {
		t.Fatal(err)
	}
	// The second run of the file finds RT-3-R1 in the ledger already: only a payout it records is linked.
	if n := len(slices.DeleteFunc(events, func(e ledger.Event) bool { return !strings.Contains(e.Detail, "a retry of RT-3") })); n != 1 {
		t.Errorf("RT-3-R1's trail names RT-3 in %d events, want 1", n)
	}
}

func TestRetryFileOfAnAbortedXLSXRun(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(h.Dir, "vendors.xlsx")
	f := excelize.NewFile()
	rows := [][]any{{"external_invoice_ref", "recipient_reference", "bank", "third_party_account_no", "amount"},
		{"AB-1", "Aisyah", "Maybank", "0123456781", "100.00"},
		{"AB-2", "Bala", "Maybank", "0123456782", "200.00"},
		{"AB-3", "Chong", "Maybank", "0123456783", "300.00"}}
	for i, r := range rows {
		if err := f.SetSheetRow("Sheet1", "A"+string(rune('1'+i)), &r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	// The process is stopped while the first create is on its way, and its answer is lost: its
	// outcome is unknown (the service has it), and the other rows are never sent.
	var first string
	svc := &scriptedService{Client: h.Client, loseAnswer: func(ref string) bool {
		if first != "" {
			return false
		}
		first = ref
		cancel()
		return true
	}}
	res := h.Run(ctx, path, func(c *batch.Config) { c.Service, c.Workers = svc, 1 })
	if res.ExitCode != exitcode.Aborted || res.Unknown != 1 || res.NotSent != 2 {
		t.Fatalf("exit %d, unknown %d, not sent %d; want %d, 1, 2", res.ExitCode, res.Unknown, res.NotSent, exitcode.Aborted)
	}
	xlsxPath := filepath.Join(h.Cfg.ReportDir, "vendors."+res.RunID+".retry.xlsx")
	if !slices.Contains(res.Reports, xlsxPath) {
		t.Fatalf("reports %q lack %s", res.Reports, xlsxPath)
	}
	recs := readCSV(t, res.RetryFile)
	refs := column(t, recs, read.ColRef)
	if !slices.Equal(refs, []string{"AB-1", "AB-2", "AB-3"}) {
		t.Fatalf("retry file refs %q, want every row, each under its own reference", refs)
	}
	for i, why := range column(t, recs, retry.Column) {
		if want := "not sent: "; refs[i] == first {
			if !strings.HasPrefix(why, retry.WhyUnknown) {
				t.Errorf("%s, outcome unknown: why %q", refs[i], why)
			}
		} else if !strings.HasPrefix(why, want) {
			t.Errorf("%s: why %q, want %q first", refs[i], why, want)
		}
	}

	// The XLSX retry file, dropped in as it is, pays what is left, once.
	for round := 1; round <= 2; round++ {
		res := h.Run(context.Background(), xlsxPath, nil)
		if res.ExitCode != exitcode.OK || res.RetryFile != "" {
			t.Fatalf("retry run %d: exit %d, retry file %q, problems %v: %+v\n%s", round, res.ExitCode, res.RetryFile, res.Problems, res, batchtest.ReadFile(t, batchtest.ResultCSV(t, res)))
		}
	}
	counts := h.Sandbox.CreateCounts()
	for _, ref := range []string{"AB-1", "AB-2", "AB-3"} {
		if counts[ref] != 1 {
			t.Errorf("%s created %d times, want 1", ref, counts[ref])
		}
	}
}

const refChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:"

func TestRetryRefStaysARef(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("A", read.MaxRefLength)
	for _, root := range []string{"PAY-1", long, strings.Repeat("B", 61)} {
		for _, n := range []int{1, 2, 10} {
			ref := retry.Ref(root, n)
			if len(ref) > read.MaxRefLength || !strings.HasSuffix(ref, "-R"+strconv.Itoa(n)) || strings.Trim(ref, refChars) != "" {
				t.Errorf("RetryRef(%q, %d) = %q", root, n, ref)
			}
			if retry.Ref(root, n) != ref {
				t.Errorf("RetryRef(%q, %d) changes", root, n)
			}
		}
	}
	if retry.Ref("PAY-1", 1) != "PAY-1-R1" {
		t.Errorf("RetryRef(PAY-1, 1) = %q", retry.Ref("PAY-1", 1))
	}
	if a, b := retry.Ref(long, 1), retry.Ref(long[:60]+"ZZZZ", 1); a == b {
		t.Errorf("two long roots alike at the start share the retry %q", a)
	}
}

// A refused payout that a reconciliation later finds at the service is paid: its retry is
// refused when its retry file is run, and a retry file written again leaves the row out.
func TestRetryOfARefusalFoundLaterIsNotPaid(t *testing.T) {
	t.Parallel()
	h := batchtest.NewHarness(t, sandbox.Options{})
	ctx := context.Background()
	rows := batchtest.Payroll(2, "FD")
	path := batchtest.WritePayroll(t, h.Dir, "payroll.csv", rows)
	svc := &scriptedService{Client: h.Client, refuse: map[string]bool{"FD-00002": true}}
	res := h.Run(ctx, path, func(c *batch.Config) { c.Service = svc })
	if res.Failed != 1 || res.RetryFile == "" {
		t.Fatalf("run: failed %d, retry file %q", res.Failed, res.RetryFile)
	}
	// What a reconciliation records when the service holds a payout it refused.
	if err := h.DB.Apply(ctx, ledger.Change{Ref: "FD-00002", From: ledger.Failed, To: ledger.Submitted, InvoiceNo: "POI-FOUND",
		Detail: "found at the service after its refusal"}); err != nil {
		t.Fatal(err)
	}
	again := h.Run(ctx, res.RetryFile, nil)
	if again.Rejected != 1 || again.ExitCode != exitcode.Rejected || len(again.Problems) != 1 ||
		!strings.Contains(again.Problems[0].Reason, intake.ErrRetryOfPaid.Error()) {
		t.Fatalf("retry run: exit %d, rejected %d, problems %v", again.ExitCode, again.Rejected, again.Problems)
	}
	if n := h.Sandbox.CreateCounts()["FD-00002-R1"]; n != 0 {
		t.Fatalf("the retry of a payout the service holds was created %d times", n)
	}
	written, err := retry.Write(ctx, h.DB, res.RunID, t.TempDir(), "", false, time.Now(), time.Now())
	if err != nil || written.CSV != "" {
		t.Fatalf("retry file written again: %+v, %v; want none, every row is paid", written, err)
	}
}
