package ledger

import (
	"context"
	"fmt"
)

// PayloadDigest is the digest the chain covers for an event's payload, salted with its payout's
// salt.
func PayloadDigest(salt, payload string) string { return personalDigest(salt, "payload", payload) }

// PersonalDigest is the digest the chain covers for a payout's name and account number, salted
// with its payout's salt: what its recording event's personal field holds.
func PersonalDigest(salt, recipient, account string) string {
	return personalDigest(salt, "recipient", recipient, "account", account)
}

// EvidenceEvent is an event as an evidence pack holds it: what the chain covers, and the payload
// with its payout's salt (empty once purged), so that the payload can be checked against its
// digest away from the ledger.
type EvidenceEvent struct {
	ChainEvent
	Payload string `json:"payload"`
	Salt    string `json:"salt"`
}

// RunEvents returns, oldest first, the events of a run up to the chain head upTo: those recorded
// by the run, and every event of its payouts, whoever recorded them: the payouts its input rows
// named, those it changed (as a reconciliation does), and those its report shows at the lines it
// stored no row of, which an earlier run of the same source recorded (RunLines): a run that
// resumes a stopped one reports the rows the stopped one sent, and its pack holds their events.
func (db *DB) RunEvents(ctx context.Context, runID string, upTo ChainHead) ([]EvidenceEvent, error) {
	out, err := scanAll(ctx, db.sql, `SELECT e.id, e.ref, e.run_id, e.at, e.from_state, e.to_state, e.detail, e.payload, e.actor, e.version,
		e.facts, e.personal, e.prev_hash, e.hash, COALESCE(s.salt, '') FROM events e
		LEFT JOIN payout_salts s ON s.ref = e.ref
		WHERE e.id <= $1 AND (e.run_id = $2 OR e.ref IN (SELECT ref FROM run_rows WHERE run_id = $3 AND rejected = 0)
			OR e.ref IN (SELECT ref FROM events WHERE run_id = $4 AND ref <> '')
			OR e.ref IN (SELECT p.ref FROM runs r CROSS JOIN runs o`+db.eng.indexedBy("runs_by_source")+`
				`+db.eng.joinInOrder+`payouts p`+db.eng.indexedBy("payouts_by_run")+` ON p.run_id = o.id
				WHERE r.id = $5 AND o.source = r.source AND o.source <> '' AND o.started_at <= r.started_at
				AND NOT EXISTS (SELECT 1 FROM run_rows x WHERE x.run_id = $6 AND x.line = p.line)))
		ORDER BY e.id`, func(s scanner) (EvidenceEvent, error) {
		var e EvidenceEvent
		c := &e.ChainEvent
		err := s.Scan(&c.ID, &c.Ref, &c.RunID, &c.At, &c.From, &c.To, &c.Detail, &c.Payload, &c.Actor, &c.Version,
			&c.Facts, &c.Personal, &c.PrevHash, &c.Hash, &e.Salt)
		e.Payload = c.Payload
		return e, err
	}, upTo.ID, runID, runID, runID, runID, runID)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, err)
	}
	return out, nil
}
