package intake

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/batch/approval"
	"github.com/payout/payout/batch/read"
)

// A plan statement is the canonical text of what a file would pay, as people sign it to approve
// the file (`payout plan FILE | ssh-keygen -Y sign -n payout-plan`). It is computed from the rows
// the run itself reads and validates (one pass of the file, checked against the passes that pay
// it), with the provider list, and without the ledger, so that a signer away from the ledger
// computes the same text. One item a line, fields separated by tabs:
//
//	payout-plan v1
//	file-sha256	HEX
//	sheet	NAME                         ("-" for a CSV file)
//	row	LINE	"REF"	PROVIDER_ID	ACCOUNT	AMOUNT	"RECIPIENT"   (each row the file makes payable)
//	rejected	LINE                     (each row it does not)
//	rows	N	payable	N	rejected	N
//	total	MYR	AMOUNT                 (the payable rows')
//	valid-until	YYYY-MM-DD             (UTC: the last day a run accepts the signature)
//
// References and names are Go-quoted; accounts are the digits as paid; amounts have two decimals.
// The plan's digest is the SHA-256 of the text before its valid-until line: what a rejection
// names, and what a run records it was approved on.

// PlanVersion opens every plan statement.
const PlanVersion = "payout-plan v1"

// Plan is what a file would pay, as a signature binds it.
type Plan struct {
	FileSHA256 string          `json:"file_sha256"`
	Sheet      string          `json:"sheet,omitempty"`
	Rows       int             `json:"rows"`
	Payable    int             `json:"payable"`
	Rejected   int             `json:"rejected"`
	Total      decimal.Decimal `json:"total"`
	// NewPayouts and NewTotal are the payable rows whose reference the ledger does not hold: the
	// payouts a run would add.
	NewPayouts int             `json:"new_payouts"`
	NewTotal   decimal.Decimal `json:"new_total"`
	Digest     string          `json:"digest"`
	body       []byte
	// fileTotal is every row's amount as written, rejected rows included: what a run that pays
	// nothing reports as its file's total. A signature binds Total, never this.
	fileTotal decimal.Decimal
	// banks names the providers the statement's rows pay by id, for the people who read it.
	banks map[int64]string
	// unsettled counts the payable rows a run may send: new ones, and those the ledger holds
	// READY, SUBMITTING or UNKNOWN. A file with none needs no signature: nothing of it is sent.
	unsettled int
}

// Bank is a provider a plan pays, by the id its statement names and the name the service lists.
type Bank struct {
	ID   int64
	Name string
}

// Banks lists the providers the plan's rows pay, by id: the statement names each by its id
// alone, and whoever signs it reads the names here.
func (p Plan) Banks() []Bank {
	banks := make([]Bank, 0, len(p.banks))
	for id, name := range p.banks {
		banks = append(banks, Bank{ID: id, Name: name})
	}
	slices.SortFunc(banks, func(a, b Bank) int { return cmp.Compare(a.ID, b.ID) })
	return banks
}

// planText collects a plan's row lines as the survey meets the rows, when it keeps them.
type planText struct {
	keep bool
	rows bytes.Buffer
	// body and digest are the statement, once the plan is made, and its SHA-256.
	body     []byte
	digest   string
	payable  int
	rejected int
	total    read.Total
	banks    map[int64]string
}

func (t *planText) add(row *fileRow) {
	if !row.planned {
		t.rejected++
		if t.keep {
			fmt.Fprintf(&t.rows, "rejected\t%d\n", row.raw.Line)
		}
		return
	}
	p := row.payment
	t.payable++
	t.total.Add(p.Amount)
	if _, ok := t.banks[p.ProviderID]; !ok {
		if t.banks == nil {
			t.banks = make(map[int64]string)
		}
		t.banks[p.ProviderID] = p.Bank
	}
	if !t.keep {
		return
	}
	fmt.Fprintf(&t.rows, "row\t%d\t%s\t%d\t%s\t%s\t%s\n", p.Line, strconv.Quote(p.Ref), p.ProviderID, p.Account,
		p.Amount.StringFixed(2), strconv.Quote(p.Recipient))
}

// Plan is the surveyed file's plan, with the SHA-256 of the bytes the survey read. Without the
// text kept (no signature to check), it has no statement and no digest.
func (sv *Survey) Plan() Plan {
	sha := sv.sum
	t := &sv.text
	pl := Plan{FileSHA256: sha, Sheet: sv.sheet, Rows: sv.rows, Payable: t.payable, Rejected: t.rejected,
		Total: t.total.Decimal(), NewPayouts: sv.fresh, NewTotal: sv.freshTotal.Decimal(),
		fileTotal: sv.validTotal.Decimal().Add(sv.rejectedTotal.Decimal()), banks: t.banks, unsettled: sv.unsettled}
	if !t.keep {
		return pl
	}
	if t.body == nil {
		sheet := sv.sheet
		if sheet == "" {
			sheet = "-"
		}
		var b bytes.Buffer
		b.Grow(t.rows.Len() + 256)
		fmt.Fprintf(&b, "%s\nfile-sha256\t%s\nsheet\t%s\n", PlanVersion, sha, sheet)
		b.Write(t.rows.Bytes())
		fmt.Fprintf(&b, "rows\t%d\tpayable\t%d\trejected\t%d\ntotal\tMYR\t%s\n", sv.rows, t.payable, t.rejected, pl.Total.StringFixed(2))
		sum := sha256.Sum256(b.Bytes())
		// The statement holds the rows' lines from now on: a run keeps one copy of them.
		t.body, t.digest, t.rows = b.Bytes(), hex.EncodeToString(sum[:]), bytes.Buffer{}
	}
	pl.body, pl.Digest = t.body, t.digest
	return pl
}

// DropPlanText lets go of the plan statement's text, which the run has checked and recorded by
// then: a run pays for minutes, and a large file's statement is megabytes. Plan then has no
// statement and no digest.
func (sv *Survey) DropPlanText() {
	sv.text = planText{payable: sv.text.payable, rejected: sv.text.rejected, total: sv.text.total, banks: sv.text.banks}
}

// WithoutText is the plan without its statement's text: its figures, digest and banks, for what a
// run reports of it once the statement is recorded (a large file's statement is megabytes).
func (p Plan) WithoutText() Plan {
	p.body = nil
	return p
}

// ValidUntilLine is the statement's last line for a signature valid through day (UTC).
func ValidUntilLine(day time.Time) string {
	return approval.ValidUntilLine(day)
}

// Statement is the plan's text, signed valid through day (UTC).
func (p Plan) Statement(day time.Time) io.Reader {
	return io.MultiReader(bytes.NewReader(p.body), bytes.NewReader([]byte(ValidUntilLine(day))))
}

// WriteStatement writes the plan's text, valid through day, to w.
func (p Plan) WriteStatement(w io.Writer, day time.Time) error {
	_, err := io.Copy(w, p.Statement(day))
	return err
}

// Unsettled counts the payable rows a run may send: new ones, and those the ledger holds READY,
// SUBMITTING or UNKNOWN. A file with none needs no signature: nothing of it is sent.
func (p Plan) Unsettled() int { return p.unsettled }

// FileTotal is every row's amount as written, rejected rows included: what a run that pays
// nothing reports as its file's total.
func (p Plan) FileTotal() decimal.Decimal { return p.fileTotal }

// Text is the statement before its valid-until line: what the plan's digest sums, and what the
// ledger stores of it.
func (p Plan) Text() []byte { return p.body }

// Judged is the plan as the approval judge reads it.
func (p Plan) Judged() approval.Plan {
	return approval.Plan{FileSHA256: p.FileSHA256, Digest: p.Digest, Statement: p.Statement}
}

// RefusalStatement is the statement that refuses the plan for reason.
func (p Plan) RefusalStatement(reason string) []byte {
	return approval.RefusalStatement(p.Judged(), reason)
}
