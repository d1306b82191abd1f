package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// EventHeadSigned records, at a run's end, the chain head its reports print, signed by the
// service account: facts "head" (ID:HASH), "statement" (what was signed) and "signature" (the
// armored SSHSIG). The next run checks the chain from the latest one on before it pays
// (VerifySince): whoever can write the database cannot make that signature, so history before
// it cannot be rewritten unseen, and what was appended since is checked before it is trusted.
const EventHeadSigned = "HEAD_SIGNED"

// VerifySince checks the chain from head on, as VerifyChain checks each event: head must still
// be in the chain with its hash, and every event after it must link to the one before, match its
// hash, move its payout as the state machine allows, and not be dated back. It returns what it
// finds wrong; none when the chain from head on holds.
func (db *DB) VerifySince(ctx context.Context, head ChainHead) ([]Finding, error) {
	hash, err := db.chainHashAt(ctx, head.ID)
	if errors.Is(err, ErrNotFound) {
		return []Finding{{EventID: head.ID, Problem: "the signed head is no longer in the chain: the ledger was cut back or replaced"}}, nil
	}
	if err != nil {
		return nil, err
	}
	if hash != head.Hash {
		return []Finding{{EventID: head.ID, Problem: fmt.Sprintf("it reads %s, not the %s signed at the head: the chain up to it was rewritten", hash, head.Hash)}}, nil
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT 'events', `+chainEventColumns+` FROM events WHERE id >= $1
		UNION ALL SELECT 'row_events', `+chainEventColumns+` FROM row_events WHERE id >= $2 ORDER BY 2`, head.ID, head.ID)
	if err != nil {
		return nil, fmt.Errorf("verify since %s: %w", head, err)
	}
	defer rows.Close()
	var findings []Finding
	var prev ChainEvent
	for rows.Next() {
		var table string
		e, err := scanChainEvent(headScanner{rows: rows, head: []any{&table}})
		if err != nil {
			return nil, fmt.Errorf("verify since %s: %w", head, err)
		}
		if e.ID != head.ID {
			problems := eventProblems(e, table, prev.ID, prev.At, true)
			switch {
			case e.ID != prev.ID+1:
				problems = append(problems, fmt.Sprintf("events %d to %d are missing (deleted)", prev.ID+1, e.ID-1))
			case e.PrevHash != prev.Hash:
				problems = append(problems, fmt.Sprintf("its prev_hash is not the hash of event %d", prev.ID))
			}
			if HashEvent(e) != e.Hash {
				problems = append(problems, "its content does not match its hash (edited, or inserted by hand)")
			}
			if len(problems) > 0 {
				findings = append(findings, Finding{EventID: e.ID, Ref: e.Ref, Problem: strings.Join(problems, "; ")})
			}
		}
		prev = e
	}
	return findings, rows.Err()
}
