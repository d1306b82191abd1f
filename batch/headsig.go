package batch

import (
	"context"
	"fmt"
	"strings"

	"github.com/payout/payout/batch/atomicfile"
	"github.com/payout/payout/batch/signature"
	"github.com/payout/payout/ledger"
)

// HeadVersion opens every chain-head statement.
const HeadVersion = "payout-chain-head v1"

// HeadSuffix ends the name of the statement a run's end writes beside its reports; its
// signature is that name with ".sig" added.
const HeadSuffix = ".chain-head"

// HeadStatement is the text a run's end signs: the run, and the chain head its reports print.
// Kept apart from the ledger, a signed head lets an auditor tell later that the ledger's history
// up to it is still the one the run reported (payout audit verify --head).
func HeadStatement(runID string, head ledger.ChainHead) []byte {
	return []byte(HeadVersion + "\nrun\t" + runID + "\nhead\t" + head.String() + "\n")
}

// ParseHeadStatement reads what HeadStatement wrote.
func ParseHeadStatement(data []byte) (runID string, head ledger.ChainHead, err error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || lines[0] != HeadVersion || !strings.HasPrefix(lines[1], "run\t") || !strings.HasPrefix(lines[2], "head\t") {
		return "", head, fmt.Errorf("not a chain-head statement: want %q, a run line and a head line", HeadVersion)
	}
	head, err = ledger.ParseChainHead(strings.TrimPrefix(lines[2], "head\t"))
	return strings.TrimPrefix(lines[1], "run\t"), head, err
}

// signHead writes, beside the run's CSV report, the statement of the chain head its reports
// print and its signature (Config.SignHead), and adds both to the run's reports.
func (r *Runner) signHead(ctx context.Context, res *Result, csvPath, headText string) error {
	head, err := ledger.ParseChainHead(headText)
	if err != nil {
		return fmt.Errorf("sign the chain head: %w", err)
	}
	statement := HeadStatement(res.RunID, head)
	sig, err := r.cfg.SignHead(ctx, statement)
	if err != nil {
		return fmt.Errorf("sign the chain head: %w", err)
	}
	path := strings.TrimSuffix(csvPath, ".result.csv") + HeadSuffix
	if err := atomicfile.WriteBytes(path, 0o644, statement); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(path+".sig", 0o644, sig); err != nil {
		return err
	}
	// In the chain too: the next run checks what was appended since before it pays.
	if _, err := r.cfg.Ledger.AppendLedgerEvents(ctx, ledger.LedgerEvent{RunID: res.RunID, Kind: ledger.EventHeadSigned,
		Detail: "chain head " + head.String() + " signed at the run's end",
		Facts:  map[string]string{"head": head.String(), "statement": string(statement), "signature": string(sig)}}); err != nil {
		return err
	}
	res.Reports = append(res.Reports, path, path+".sig")
	return nil
}

// sinceSignedHead checks the chain from the head the latest run signed on (ledger.VerifySince),
// its signature against the allowed signers (namespace payout-pack) when they are given: what is
// wrong, or "" when it holds or no head was ever signed.
func (r *Runner) sinceSignedHead(ctx context.Context) (string, error) {
	db := r.cfg.Ledger
	e, ok, err := db.LatestLedgerEvent(ctx, ledger.EventHeadSigned)
	if err != nil || !ok {
		return "", err
	}
	runID, head, err := ParseHeadStatement([]byte(e.Facts["statement"]))
	if err != nil || head.String() != e.Facts["head"] || runID != e.RunID {
		return fmt.Sprintf("the chain head signed at event %d does not say what it signed (written by hand); run payout audit verify", e.ID), nil
	}
	if allowed := r.cfg.Approval.AllowedSigners; allowed != "" {
		signers, err := signature.LoadAllowedSigners(allowed)
		if err != nil {
			return "", err
		}
		if _, err := signature.Verify([]byte(e.Facts["statement"]), []byte(e.Facts["signature"]), signature.NamespacePack, signers, e.At); err != nil {
			return fmt.Sprintf("the chain head signed at event %d: its signature does not hold (%v): written by hand; run payout audit verify", e.ID, err), nil
		}
	}
	findings, err := db.VerifySince(ctx, head)
	if err != nil || len(findings) == 0 {
		return "", err
	}
	return fmt.Sprintf("the chain since the head run %s signed (%s) does not check out: %s; run payout audit verify", runID, head, findings[0]), nil
}
