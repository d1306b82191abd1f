package audit

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/xuri/excelize/v2"

	"github.com/payout/payout/batch/report"
	"github.com/payout/payout/batch/words"
	"github.com/payout/payout/ledger"
)

// reportColumns names, for each column header of the reports (CSV and XLSX headers, HTML
// column titles, run and reconciliation reports), what of a payout it shows.
var reportColumns = map[string]string{
	"external_invoice_ref": "ref", "Reference": "ref",
	"recipient_reference": "recipient", "Recipient": "recipient",
	"payout_service_id": "provider", "Provider": "provider",
	"bank": "bank", "Bank": "bank",
	"third_party_account_no": "account", "Account": "account",
	"amount": "amount", "Amount": "amount", "Amount (MYR)": "amount", "ledger_amount": "amount", "Ledger amount": "amount",
	"Ledger amount (MYR)": "amount",
	"state":               "state", "State": "state", "ledger_state": "state", "Ledger state": "state",
	"payout_invoice_no": "invoice", "Invoice no.": "invoice",
	"transaction_status": "status", "Status": "status",
}

// Labels of the summaries that print the chain head and the input's SHA-256.
var (
	headLabels = map[string]bool{"Audit chain head": true}
	fileLabels = map[string]bool{"SHA-256": true, "File SHA-256": true}
)

const approvedLabel = "Approved by"

// reportReader reads one report member: rows goes to check, label/value pairs of its summary
// to summary.
type reportReader struct {
	v       *packVerifier
	name    string
	heads   int // chain heads printed
	neutral bool
	// What the rows add up to, by state, and the totals the report states (rows and amount by
	// state, and "Total").
	rows     int
	sum      decimal.Decimal
	byState  map[string]*tally
	stated   [][3]string
	inTotals bool // reading an XLSX summary's table of totals
}

type tally struct {
	count  int
	amount decimal.Decimal
}

// checkReports checks every report member's rows and summary against the events and run.json.
func (v *packVerifier) checkReports() error {
	heads := 0
	for _, name := range v.names() {
		if !strings.HasPrefix(name, reportsDir) {
			continue
		}
		rr := &reportReader{v: v, name: name, byState: map[string]*tally{}}
		var read func(io.Reader) error
		switch {
		case strings.HasSuffix(name, ".csv"):
			rr.neutral, read = true, rr.readCSV
		case strings.HasSuffix(name, ".html"):
			read = rr.readHTML
		case strings.HasSuffix(name, ".xlsx"):
			rr.neutral, read = true, rr.readXLSX
		default:
			continue
		}
		if err := v.member(name, read); err != nil {
			if errors.Is(err, ErrPackTooLarge) {
				return err
			}
			v.finding("%s: %v", name, err)
		}
		heads += rr.heads
		rr.checkTotals()
		if rr.heads == 0 && !strings.HasSuffix(name, ".csv") {
			v.finding("%s prints no chain head", name)
		}
	}
	if heads == 0 {
		v.finding("the pack holds no report that prints a chain head")
	}
	v.checkUnreported()
	return nil
}

// checkUnreported names the payouts the run recorded, by its events, that no report row shows:
// a row taken out of every report. The CSV report lists every row of a run.
func (v *packVerifier) checkUnreported() {
	hasCSV := false
	for name := range v.files {
		hasCSV = hasCSV || strings.HasPrefix(name, reportsDir) && strings.HasSuffix(name, ".csv")
	}
	if !hasCSV || v.rep.Info.RunID == "" {
		return
	}
	var missing []string
	for ref, p := range v.payouts {
		if p.rows == 0 && p.recordedBy == v.rep.Info.RunID {
			missing = append(missing, ref)
		}
	}
	sort.Strings(missing)
	for _, ref := range missing {
		v.finding("payout %s: its events say run %s recorded it, no report row shows it (taken out)", ref, v.rep.Info.RunID)
	}
}

// summary checks one label/value pair of a report's summary.
func (rr *reportReader) summary(label, value string) {
	info := rr.v.rep.Info
	switch {
	case headLabels[label]:
		rr.heads++
		if value != info.ChainHead {
			rr.v.finding("%s prints chain head %s, %s says %s", rr.name, value, runMember, info.ChainHead)
		}
	case label == approvedLabel && value != "":
		who, _, _ := strings.Cut(value, " at ")
		rr.v.approvers[who] = append(rr.v.approvers[who], rr.name)
	case fileLabels[label] && info.InputSHA256 != "" && value != info.InputSHA256:
		rr.v.finding("%s prints the input's SHA-256 %s, %s says %s", rr.name, value, runMember, info.InputSHA256)
	}
}

// indexHeader maps a table's columns to what they show; nil when the table shows no payouts.
func indexHeader(header []string) map[string]int {
	idx := map[string]int{}
	for i, h := range header {
		if c, ok := reportColumns[strings.TrimSpace(h)]; ok {
			idx[c] = i
		}
	}
	if _, ok := idx["ref"]; !ok {
		return nil
	}
	return idx
}

// row checks one report row, where says which ("line 7", "sheet Rows row 7").
func (rr *reportReader) row(where string, idx map[string]int, cells []string) {
	get := func(c string) (string, bool) {
		i, ok := idx[c]
		if !ok {
			return "", false
		}
		s := ""
		if i < len(cells) {
			s = cells[i]
		}
		if rr.neutral {
			s = words.Unneutralize(s)
		}
		return s, true
	}
	ref, _ := get("ref")
	state, _ := get("state")
	amount, _ := get("amount")
	rr.add(state, amount)
	p := rr.v.payouts[ref]
	rr.v.rep.Rows++
	if p == nil {
		if state != string(ledger.Rejected) {
			rr.v.finding("%s %s: payout %s is %s in the report, the pack holds no event of it", rr.name, where, ref, orNone(state))
		}
		return
	}
	p.rows++
	var diffs []string
	for _, c := range rowChecks {
		got, ok := get(c.column)
		if want := c.want(p); ok && !c.same(got, want) {
			diffs = append(diffs, fmt.Sprintf("%s %q, its events say %q", c.what, got, want))
		}
	}
	name, okName := get("recipient")
	account, okAccount := get("account")
	if okName && okAccount {
		if d := personalProblem(p, name, account); d != "" {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) > 0 {
		rr.v.finding("%s %s: payout %s: %s", rr.name, where, ref, strings.Join(diffs, "; "))
	}
}

// rowCheck compares one column of a report row with what the events say.
type rowCheck struct {
	column, what string
	want         func(*payoutReplay) string
	same         func(got, want string) bool
}

func sameText(got, want string) bool { return got == want }

// sameNumber compares numbers as numbers: a spreadsheet may show 6347.1 for 6347.10, and the
// HTML report shows RM 6,347.10.
func sameNumber(got, want string) bool {
	g, err1 := decimal.NewFromString(plainNumber(got))
	w, err2 := decimal.NewFromString(want)
	return err1 == nil && err2 == nil && g.Equal(w)
}

func plainNumber(s string) string {
	return strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(s), "RM "), ",", "")
}

var rowChecks = []rowCheck{
	{"state", "state", func(p *payoutReplay) string { return p.state }, sameText},
	{"amount", "amount", func(p *payoutReplay) string { return p.amount }, sameNumber},
	{"provider", "provider", func(p *payoutReplay) string { return p.providerID }, sameNumber},
	{"bank", "bank", func(p *payoutReplay) string { return p.bank }, sameText},
	{"invoice", "invoice number", func(p *payoutReplay) string { return p.invoiceNo }, sameText},
	{"status", "transaction status", func(p *payoutReplay) string { return p.transactionStatus }, sameText},
}

// personalProblem compares a row's name and account number with the payout's digest of them,
// or with the masked forms its purge event recorded.
func personalProblem(p *payoutReplay, name, account string) string {
	if p.purged {
		if name != p.maskedRecipient || account != p.maskedAccount {
			return fmt.Sprintf("name and account %q %q, its purge event says %q %q", name, account, p.maskedRecipient, p.maskedAccount)
		}
		return ""
	}
	if p.salt == "" || ledger.PersonalDigest(p.salt, name, account) != p.personal {
		return fmt.Sprintf("name or account number does not match the digest recorded by event %d", p.firstID)
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "in no state"
	}
	return s
}

// add counts a row in the totals.
func (rr *reportReader) add(state, amount string) {
	rr.rows++
	t := rr.byState[state]
	if t == nil {
		t = &tally{}
		rr.byState[state] = t
	}
	t.count++
	// Read as the reports count it: a cell that is no number (1.250,00) is in no total.
	if d, ok := ledger.AmountAsWritten(amount); ok {
		t.amount = t.amount.Add(d)
		rr.sum = rr.sum.Add(d)
	}
}

// checkTotals compares the totals a report states with what its rows add up to. A report that
// lists fewer rows than its total counts (the HTML report lists the first rows of a long run)
// is not compared.
func (rr *reportReader) checkTotals() {
	for _, st := range rr.stated {
		if st[0] == "Total" && st[1] != strconv.Itoa(rr.rows) {
			return
		}
	}
	seen := map[string]bool{}
	for _, st := range rr.stated {
		want := tally{count: rr.rows, amount: rr.sum}
		if st[0] != "Total" {
			seen[st[0]] = true
			if t := rr.byState[st[0]]; t != nil {
				want = *t
			} else {
				want = tally{}
			}
		}
		if st[1] != strconv.Itoa(want.count) || !sameNumber(st[2], want.amount.StringFixed(2)) {
			rr.v.finding("%s states %s: %s rows, %s; its rows add up to %d rows, %s", rr.name, st[0], st[1], st[2], want.count, want.amount.StringFixed(2))
		}
	}
	for state, t := range rr.byState {
		if len(rr.stated) > 0 && !seen[state] && t.count > 0 {
			rr.v.finding("%s states no total for %s, its rows hold %d rows in that state", rr.name, state, t.count)
		}
	}
}

func (rr *reportReader) readCSV(r io.Reader) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("no header: %w", err)
	}
	idx := indexHeader(append([]string(nil), header...))
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if idx != nil {
			line, _ := cr.FieldPos(0)
			rr.row("line "+strconv.Itoa(line), idx, rec)
		}
	}
}

// readXLSX reads the Summary sheet and every sheet of rows. excelize holds the workbook's zip
// whole: the member's limit (PackLimits.XLSX) bounds it.
func (rr *reportReader) readXLSX(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{UnzipSizeLimit: rr.v.lim.XLSX, UnzipXMLSizeLimit: 16 << 20})
	if err != nil {
		return err
	}
	defer f.Close()
	for _, sheet := range f.GetSheetList() {
		if err := rr.readSheet(f, sheet); err != nil {
			return fmt.Errorf("sheet %s: %w", sheet, err)
		}
	}
	return nil
}

func (rr *reportReader) readSheet(f *excelize.File, sheet string) error {
	rows, err := f.Rows(sheet)
	if err != nil {
		return err
	}
	defer rows.Close()
	var idx map[string]int
	for n := 1; rows.Next(); n++ {
		cells, err := rows.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			return err
		}
		switch {
		case sheet == report.SheetSummary:
			switch {
			case len(cells) >= 3 && cells[0] == "State":
				rr.inTotals = true
			case len(cells) >= 3 && rr.inTotals:
				rr.stated = append(rr.stated, [3]string{cells[0], cells[1], cells[2]})
			case len(cells) >= 2:
				rr.summary(cells[0], cells[1])
			}
		case n == 1:
			idx = indexHeader(cells)
		case idx != nil:
			rr.row(fmt.Sprintf("sheet %s row %d", sheet, n), idx, cells)
		}
	}
	return rows.Error()
}
