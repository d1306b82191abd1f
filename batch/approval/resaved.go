package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/payout/payout/batch/signature"
)

// A signature binds a file's bytes (its SHA-256 is in the statement), so a CSV opened and saved
// again by a spreadsheet or an editor voids every signature even when not a row changed: the
// line endings (CRLF for LF, or back) or the byte-order mark are what such a save changes. When
// a signature does not sign the file's plan, the file is tried with those undone; a signature
// that signs one of them is said to have signed the file before that save, so that its signers
// know what changed and that nothing of what it pays did.

// maxResavedFile bounds the file read to tell a save from a change: payroll CSVs are far smaller.
const maxResavedFile = 64 << 20

// resaving is the file as it was before a save that changed only its bytes' form: its SHA-256,
// and what the save did.
type resaving struct {
	sha256, change string
}

var utf8BOM = []byte("\xef\xbb\xbf")

// resavings are the forms of the text file at path that differ from it only by line endings or a
// byte-order mark; none for a workbook (a ZIP) or a file too large or unreadable.
func resavings(path string) []resaving {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxResavedFile+1))
	if err != nil || len(data) > maxResavedFile || bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return nil
	}
	var out []resaving
	add := func(b []byte, change string) {
		if !bytes.Equal(b, data) {
			sum := sha256.Sum256(b)
			out = append(out, resaving{hex.EncodeToString(sum[:]), change})
		}
	}
	lf := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if bytes.Contains(data, []byte("\r\n")) {
		add(lf, "it was saved again with CRLF (Windows) line endings where it had LF")
	}
	if bytes.Contains(lf, []byte("\n")) && !bytes.Contains(data, []byte("\r\n")) {
		add(bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n")), "it was saved again with LF line endings where it had CRLF (Windows)")
	}
	if rest, ok := bytes.CutPrefix(data, utf8BOM); ok {
		add(rest, "it was saved again with a byte-order mark (BOM) at its start")
	} else {
		add(append(bytes.Clone(utf8BOM), data...), "it was saved again without the byte-order mark (BOM) it began with")
	}
	return out
}

// statementOf is plan's statement as it would be for a file whose SHA-256 is sha: the same
// rows, sheet and totals.
func statementOf(plan Plan, sha string) func(day time.Time) io.Reader {
	return func(day time.Time) io.Reader {
		b, err := io.ReadAll(plan.Statement(day))
		if err != nil {
			return bytes.NewReader(nil)
		}
		return strings.NewReader(strings.Replace(string(b), "\nfile-sha256\t"+plan.FileSHA256+"\n", "\nfile-sha256\t"+sha+"\n", 1))
	}
}

// explainResaved says, of a signature that does not sign the plan of the file at path, that it
// signed the same rows in the file's bytes before a save that changed only their form; "" when
// it did not.
func explainResaved(path string, allowed *signature.AllowedSigners, sig signature.Signature, namespace string, plan Plan, now time.Time, days int) string {
	for _, r := range resavings(path) {
		then := Plan{FileSHA256: r.sha256, Statement: statementOf(plan, r.sha256)}
		if _, _, ok, _ := signedDay(allowed, sig, namespace, then, now, days); ok {
			return fmt.Sprintf("it signs the same rows in the file as it was signed (SHA-256 %s), and %s (SHA-256 now %s): a signature binds the file's bytes, so put back the file that was signed, or have this one signed again",
				r.sha256, r.change, plan.FileSHA256)
		}
	}
	return ""
}
