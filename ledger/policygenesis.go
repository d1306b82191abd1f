package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// The approval policy starts with a genesis: the policy event that `payout init` (Create) writes
// as the chain's first event, even for a policy of 0, or, for a ledger made by an earlier
// version, the one its upgrade (migration 0015 on SQLite, 0005 on PostgreSQL) writes recording
// the policy it had then. A reader refuses a chain without one (ErrPolicyLost): otherwise
// deleting every policy event would bring the policy down to no approval at all. The genesis
// carries facts "genesis": "init" or "upgrade".
const (
	genesisInit    = "init"
	genesisUpgrade = "upgrade"
)

// ErrPolicyLost is returned (wrapped) when the chain holds no genesis of the approval policy.
var ErrPolicyLost = errors.New("approval policy: the ledger has lost its policy")

// checkGenesis says what is wrong with the policy event e whose facts say genesis kind (""
// for none), when a genesis was seen already or pol is the policy before it; "" when nothing is.
func checkGenesis(e ChainEvent, kind string, seen bool, pol ApprovalPolicy) string {
	switch {
	case kind == "":
		return ""
	case seen:
		return "says the ledger's init or upgrade wrote it, after the one they wrote (written by hand)"
	case kind == genesisInit && (e.PrevHash != "" || pol.Event.ID != 0):
		return "says payout init wrote it, but it is not the chain's first event (written by hand)"
	case kind != genesisInit && kind != genesisUpgrade:
		return fmt.Sprintf("says %q wrote it, neither init nor upgrade (written by hand)", kind)
	}
	return ""
}

// writeGenesis appends, inside the migration's transaction tx, the genesis of the approval
// policy: on an empty chain (a ledger being made) the init's, asking db.createApprovals
// signers; on a ledger made by an earlier version the upgrade's, recording the policy it held.
// A ledger whose policy events do not hold gets none, and pays nothing until it is restored.
func (db *DB) writeGenesis(ctx context.Context, tx *sql.Tx) error {
	if db.eng.lockChain != "" {
		if _, err := tx.ExecContext(ctx, db.eng.lockChain); err != nil {
			return fmt.Errorf("policy genesis: %w", err)
		}
	}
	head, err := readChainHead(ctx, tx)
	if err != nil {
		return fmt.Errorf("policy genesis: %w", err)
	}
	n := strconv.Itoa(db.createApprovals)
	e := LedgerEvent{Kind: EventPolicy, Detail: "approval policy: " + n + " signers, set at init",
		Facts: map[string]string{"approvals": n, "was": "0", "genesis": genesisInit}}
	if head.ID != 0 {
		pol, err := readPolicyEvents(ctx, tx, false)
		if err != nil {
			db.log.Error("the ledger's approval policy does not hold: it pays nothing until it is restored", "err", err)
			return nil
		}
		n = strconv.Itoa(pol.Approvals)
		e = LedgerEvent{Kind: EventPolicy, Detail: "approval policy: " + n + " signers, as the ledger held it at its upgrade (a lowering carries its signatures from here on)",
			Facts: map[string]string{"approvals": n, "was": n, "genesis": genesisUpgrade}}
	}
	if _, err := db.appendLedgerEvents(ctx, tx, []LedgerEvent{e}); err != nil {
		return fmt.Errorf("policy genesis: %w", err)
	}
	return nil
}
