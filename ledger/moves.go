package ledger

import (
	"context"
	"errors"
	"fmt"
)

// ErrIllegalMove is returned, wrapped in an error naming the payout and the move, by Apply for a
// change that the payout state machine does not allow. Whatever decides a move above the
// ledger, a bug there cannot move a payout's state backwards: the ledger refuses the whole call
// and records nothing of it.
var ErrIllegalMove = errors.New("not a move of the payout state machine")

// moves is every move of a payout's state that the ledger records, by the state it leaves. A
// move to the same state records an event (a lookup's answer, a note for auditors) and may fill
// in what the service said; it never changes where the payout stands. REJECTED rows are written
// once, when their file is read, and never moved.
var moves = map[State][]State{
	// The intent, recorded durably before the POST; or a note on a payout not sent yet (a retry
	// linked to the payout it retries).
	Ready: {Ready, Submitting},
	// The POST's outcome: accepted; outcome unknown (looked up before anything is sent again);
	// or certainly not sent (the request never reached the service, a 429, a refused token).
	// A crashed process's intents become UNKNOWN as well.
	Submitting: {Submitted, Unknown, Ready},
	// A lookup (or a signed callback) found it; a grace passed with lookups proving it was never
	// created, or a person released it after such a lookup; a refusal confirmed by a lookup.
	Unknown: {Unknown, Submitted, Ready, Failed},
	// The service's final word, from an answer, a lookup or a callback.
	Submitted: {Submitted, Succeeded, Failed},
	// A refusal that the service did not keep to: a lookup found the payout it refused to
	// create, which then takes the documented way through SUBMITTED.
	Failed:    {Failed, Submitted},
	Succeeded: {Succeeded},
}

// Allowed reports whether the state machine lets a payout in state from move to state to.
func Allowed(from, to State) bool {
	for _, s := range moves[from] {
		if s == to {
			return true
		}
	}
	return false
}

// moveError is a change refused because its move is not in the state machine. It unwraps to
// ErrIllegalMove.
type moveError struct {
	Ref      string
	From, To State
}

func (e *moveError) Error() string {
	return fmt.Sprintf("payout %s: %s -> %s: %v", e.Ref, e.From, e.To, ErrIllegalMove)
}

func (e *moveError) Unwrap() error { return ErrIllegalMove }

// checkMoves refuses a call any of whose changes is not a move of the state machine.
func checkMoves(changes []Change) error {
	for _, c := range changes {
		if !Allowed(c.From, c.To) {
			return &moveError{Ref: c.Ref, From: c.From, To: c.To}
		}
	}
	return nil
}

// StrayPayouts are the payouts a run may send (READY, SUBMITTING or UNKNOWN) whose own events do
// not lead to the state their row holds by moves the state machine allows, each with why: a row
// set back to READY by a plain UPDATE, or with an event of a move that no command makes appended
// by hand. Such a payout is never sent. One read, once a run, before its first send.
func (db *DB) StrayPayouts(ctx context.Context) (map[string]string, error) {
	// Moves are checked from the policy's genesis on, as audit verify checks them.
	var genesis int64
	if err := db.sql.QueryRowContext(ctx, `SELECT COALESCE(min(id), 0) FROM events WHERE ref = '' AND to_state = $1 AND `+
		db.eng.jsonField("facts", "genesis")+` <> ''`, EventPolicy).Scan(&genesis); err != nil {
		return nil, fmt.Errorf("payouts whose events disagree: %w", err)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT p.ref, p.state, COALESCE(e.from_state, ''), COALESCE(e.to_state, ''), COALESCE(e.id, 0)
		FROM payouts p LEFT JOIN events e ON e.ref = p.ref WHERE p.state IN ($1, $2, $3) ORDER BY p.ref, e.id`, Ready, Submitting, Unknown)
	if err != nil {
		return nil, fmt.Errorf("payouts whose events disagree: %w", err)
	}
	defer rows.Close()
	stray := map[string]string{}
	var ref, state, last string
	settle := func() {
		if ref != "" && stray[ref] == "" && last != state {
			stray[ref] = fmt.Sprintf("its row is %s, its latest event leaves it %s (changed by hand)", state, orNone(last))
		}
	}
	for rows.Next() {
		var r, s, from, to string
		var id int64
		if err := rows.Scan(&r, &s, &from, &to, &id); err != nil {
			return nil, fmt.Errorf("payouts whose events disagree: %w", err)
		}
		if r != ref {
			settle()
			ref, state, last = r, s, ""
		}
		switch {
		case stray[ref] != "" || id < genesis:
		case last != "" && from != last:
			stray[ref] = fmt.Sprintf("event %d moves it from %s, its event before left it %s (written by hand)", id, from, last)
		case from != "" && from != to && !Allowed(State(from), State(to)):
			stray[ref] = fmt.Sprintf("event %d moves it from %s to %s, which the state machine does not allow (written by hand)", id, from, to)
		}
		last = to
	}
	settle()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("payouts whose events disagree: %w", err)
	}
	return stray, nil
}

func orNone(s string) string {
	if s == "" {
		return "without any event"
	}
	return s
}
