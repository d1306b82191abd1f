package approval

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payout/payout/batch/signature"
)

// A refusal is a signed statement (namespace payout-reject) that a plan must not be paid, kept
// beside the input as two files: the statement, `FILE.<principal>.reject`, and its signature,
// `FILE.<principal>.reject.sig`. While a valid refusal of a file's plan (or of the file's bytes)
// is beside it, no run pays it.
//
//	payout-reject v1
//	file-sha256	HEX
//	plan-sha256	HEX
//	reason	"TEXT"

// RefusalVersion opens every refusal statement.
const RefusalVersion = "payout-reject v1"

// RefusalSuffix ends a refusal statement's name; its signature adds SigSuffix.
const RefusalSuffix = ".reject"

// RefusalStatement is the statement that refuses plan for reason.
func RefusalStatement(plan Plan, reason string) []byte {
	return fmt.Appendf(nil, "%s\nfile-sha256\t%s\nplan-sha256\t%s\nreason\t%s\n", RefusalVersion, plan.FileSHA256, plan.Digest, strconv.Quote(reason))
}

// checkRefusal names who refused plan and why ("bob: wrong month") when sig, beside the input
// at sigPath, is a valid signature of a refusal statement of plan or of its file, with that
// statement; "" otherwise, with why it does not count when it is not a valid refusal at all.
func checkRefusal(allowed *signature.AllowedSigners, sig signature.Signature, sigPath string, plan Plan, now time.Time) (string, []byte, error) {
	text, err := readSmall(strings.TrimSuffix(sigPath, SigSuffix))
	if err != nil {
		return "", nil, fmt.Errorf("a refusal without its statement: %w", err)
	}
	id, err := allowed.Verify(bytes.NewReader(text), sig, signature.NamespaceReject, now)
	if err != nil {
		return "", nil, fmt.Errorf("a refusal that does not hold: %w", err)
	}
	fields, err := refusalFields(text)
	if err != nil {
		return "", nil, err
	}
	if fields["plan-sha256"] != plan.Digest && fields["file-sha256"] != plan.FileSHA256 {
		return "", nil, nil // a refusal of another version of the file
	}
	reason, err := strconv.Unquote(fields["reason"])
	if err != nil {
		reason = fields["reason"]
	}
	return id.Principal() + ": " + reason, text, nil
}

// refusalFields reads a refusal statement's fields.
func refusalFields(text []byte) (map[string]string, error) {
	fields := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	for first := true; sc.Scan(); first = false {
		if first {
			if sc.Text() != RefusalVersion {
				return nil, fmt.Errorf("a refusal statement must start with %q", RefusalVersion)
			}
			continue
		}
		k, v, _ := strings.Cut(sc.Text(), "\t")
		fields[k] = v
	}
	return fields, nil
}
