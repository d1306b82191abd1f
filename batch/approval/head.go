package approval

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

// HeadAppender records the signed head in the chain.
type HeadAppender interface {
	AppendLedgerEvents(ctx context.Context, events ...ledger.LedgerEvent) (ledger.ChainHead, error)
}

// SignHead writes, beside the run's CSV report at csvPath, the statement of the chain head its
// reports print (headText) and its signature by sign, records both in the chain, and returns the
// two files' paths.
func SignHead(ctx context.Context, db HeadAppender, sign func(ctx context.Context, statement []byte) ([]byte, error), runID, csvPath, headText string) ([]string, error) {
	head, err := ledger.ParseChainHead(headText)
	if err != nil {
		return nil, fmt.Errorf("sign the chain head: %w", err)
	}
	statement := HeadStatement(runID, head)
	sig, err := sign(ctx, statement)
	if err != nil {
		return nil, fmt.Errorf("sign the chain head: %w", err)
	}
	path := strings.TrimSuffix(csvPath, ".result.csv") + HeadSuffix
	if err := atomicfile.WriteBytes(path, 0o644, statement); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteBytes(path+".sig", 0o644, sig); err != nil {
		return nil, err
	}
	// In the chain too: the next run checks what was appended since before it pays.
	if _, err := db.AppendLedgerEvents(ctx, ledger.LedgerEvent{RunID: runID, Kind: ledger.EventHeadSigned,
		Detail: "chain head " + head.String() + " signed at the run's end",
		Facts:  map[string]string{"head": head.String(), "statement": string(statement), "signature": string(sig)}}); err != nil {
		return nil, err
	}
	return []string{path, path + ".sig"}, nil
}

// SignedHeads reads the head the latest run signed, and checks the chain from it on.
type SignedHeads interface {
	LedgerEvents(ctx context.Context, f ledger.EventFilter) ([]ledger.LedgerEvent, error)
	VerifySince(ctx context.Context, head ledger.ChainHead) ([]ledger.Finding, error)
}

// SinceSignedHead checks the chain from the head the latest run signed on (ledger.VerifySince),
// its signature against the allowed signers (the file at allowedSigners, namespace payout-pack)
// when they are given: what is wrong, or "" when it holds or no head was ever signed.
func SinceSignedHead(ctx context.Context, db SignedHeads, allowedSigners string) (string, error) {
	latest, err := db.LedgerEvents(ctx, ledger.EventFilter{Kind: ledger.EventHeadSigned, Latest: true})
	if err != nil || len(latest) == 0 {
		return "", err
	}
	e := latest[0]
	runID, head, err := ParseHeadStatement([]byte(e.Facts["statement"]))
	if err != nil || head.String() != e.Facts["head"] || runID != e.RunID {
		return fmt.Sprintf("the chain head signed at event %d does not say what it signed (written by hand); run payout audit verify", e.ID), nil
	}
	if allowedSigners != "" {
		signers, err := signature.LoadAllowedSigners(allowedSigners)
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
