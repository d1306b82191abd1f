package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Finding is one thing VerifyChain found wrong. EventID is 0 for a finding about a payout's row
// or about the file.
type Finding struct {
	EventID int64
	Ref     string
	Problem string
}

func (f Finding) String() string {
	var b strings.Builder
	if f.EventID != 0 {
		b.WriteString("event " + strconv.FormatInt(f.EventID, 10) + ": ")
	}
	if f.Ref != "" {
		b.WriteString("payout " + f.Ref + ": ")
	}
	b.WriteString(f.Problem)
	return b.String()
}

// ChainReport is what VerifyChain found: nothing wrong when Findings is empty.
type ChainReport struct {
	Events   int
	Payouts  int
	Head     ChainHead
	Findings []Finding
}

// replay is what a payout's events say its row holds.
type replay struct {
	firstID   int64
	state     string
	recorded  map[string]string // the first event's facts: the details it was recorded with
	personal  string            // the first event's digest of name and account number
	latest    map[string]string // the last value each later fact was set to
	purge     map[string]string // the facts of its purge event; nil when it was not purged
	maskedIDs []int64           // events whose payload purge replaced
}

// VerifyChain checks the whole ledger in one consistent read: PRAGMA quick_check; every event's
// hash against its content and the previous event's hash, and the ids for gaps; every payload
// against its digest; and every payout's row against what its events say (state, recorded
// details, invoice number and statuses, name and account number through their digest, or the
// masked forms of its purge). It names each event or payout that does not match.
func (db *DB) VerifyChain(ctx context.Context) (ChainReport, error) {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return ChainReport{}, fmt.Errorf("verify: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return ChainReport{}, fmt.Errorf("verify: %w", err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK") // a read: nothing to keep
	var rep ChainReport
	if err := quickCheckFindings(ctx, conn, &rep); err != nil {
		return damaged(rep, err)
	}
	if err := walkChain(ctx, conn, &rep); err != nil {
		return damaged(rep, fmt.Errorf("verify: events: %w", err))
	}
	if err := replayPayouts(ctx, conn, &rep); err != nil {
		return damaged(rep, fmt.Errorf("verify: payouts: %w", err))
	}
	return rep, nil
}

// damaged turns an error that SQLite gives for a damaged file into a finding: the check ends
// there, and what it found is that the file is damaged. Other errors pass unchanged.
func damaged(rep ChainReport, err error) (ChainReport, error) {
	if !errors.Is(classify("", err), ErrDamaged) {
		return rep, err
	}
	rep.Findings = append(rep.Findings, Finding{Problem: "the file is damaged, the check stopped: " + err.Error()})
	return rep, nil
}

func quickCheckFindings(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	lines, err := scanAll(ctx, conn, `PRAGMA quick_check`, func(s scanner) (string, error) {
		var line string
		return line, s.Scan(&line)
	})
	if err != nil {
		return fmt.Errorf("verify: quick_check: %w", err)
	}
	if len(lines) == 1 && lines[0] == "ok" {
		return nil
	}
	for _, l := range lines {
		rep.Findings = append(rep.Findings, Finding{Problem: "the file is damaged: quick_check: " + l})
	}
	return nil
}

const chainEventColumns = `id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash`

func scanChainEvent(s scanner) (ChainEvent, error) {
	var e ChainEvent
	err := s.Scan(&e.ID, &e.Ref, &e.RunID, &e.At, &e.From, &e.To, &e.Detail, &e.Payload, &e.Actor, &e.Version,
		&e.Facts, &e.Personal, &e.PrevHash, &e.Hash)
	return e, err
}

// walkChain checks every event in id order: ids without gaps, each prev_hash the hash before it,
// each hash its content's.
func walkChain(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	rows, err := conn.QueryContext(ctx, `SELECT `+chainEventColumns+` FROM events ORDER BY id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var prev ChainHead
	for rows.Next() {
		e, err := scanChainEvent(rows)
		if err != nil {
			return err
		}
		var problems []string
		if e.ID != prev.ID+1 {
			problems = append(problems, fmt.Sprintf("events %d to %d are missing (deleted)", prev.ID+1, e.ID-1))
		}
		if e.PrevHash != prev.Hash {
			problems = append(problems, fmt.Sprintf("its prev_hash is not the hash of event %d (an event before it was deleted, inserted or rewritten)", prev.ID))
		}
		if HashEvent(e) != e.Hash {
			problems = append(problems, "its content does not match its hash (edited, or inserted by hand)")
		}
		if len(problems) > 0 {
			rep.Findings = append(rep.Findings, Finding{EventID: e.ID, Ref: e.Ref, Problem: strings.Join(problems, "; ")})
		}
		prev = ChainHead{ID: e.ID, Hash: e.Hash}
		rep.Events++
	}
	rep.Head = prev
	return rows.Err()
}

// apply replays one event after a payout's first, and checks its payload against its digest.
func (r *replay) apply(e ChainEvent, salt string) string {
	facts := decodeFacts(e.Facts)
	if facts[purgeFact] != "" {
		r.purge = facts
		return ""
	}
	for k, v := range facts {
		r.latest[k] = v
	}
	switch {
	case e.Payload == PurgedPayload:
		r.maskedIDs = append(r.maskedIDs, e.ID)
	case e.Payload == "" && e.Personal != "":
		return "its payload was removed"
	case e.Payload != "" && salt == "":
		return "its payload is kept but the payout's salt is gone, so it cannot be checked"
	case e.Payload != "" && personalDigest(salt, "payload", e.Payload) != e.Personal:
		return "its payload does not match its digest (edited)"
	}
	return ""
}

// payoutRow is a payouts row with its stored amount text and its salt ("" once purged).
type payoutRow struct {
	p            Payout
	amount, salt string
}

// replayPayouts replays each payout's events against its row. It reads the events by reference
// and the payouts by reference side by side, so it holds one payout's events at a time whatever
// the size of the ledger.
func replayPayouts(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	// Events about the ledger itself (empty ref) are about no payout.
	evRows, err := conn.QueryContext(ctx, `SELECT `+chainEventColumns+` FROM events WHERE ref <> '' ORDER BY ref, id`)
	if err != nil {
		return err
	}
	defer evRows.Close()
	pRows, err := conn.QueryContext(ctx, `SELECT COALESCE((SELECT salt FROM payout_salts s WHERE s.ref = payouts.ref), ''), amount, `+
		payoutColumns+` FROM payouts ORDER BY ref`)
	if err != nil {
		return err
	}
	defer pRows.Close()
	events := &stream[ChainEvent]{rows: evRows, scan: scanChainEvent}
	payouts := &stream[payoutRow]{rows: pRows, scan: func(s scanner) (payoutRow, error) {
		var r payoutRow
		p, err := scanPayout(headScanner{rows: pRows, head: []any{&r.salt, &r.amount}})
		r.p = p
		return r, err
	}}
	events.advance()
	payouts.advance()
	for events.next != nil || payouts.next != nil {
		switch {
		case payouts.next == nil || events.next != nil && events.next.Ref < payouts.next.p.Ref:
			g := events.group(func(e *ChainEvent) string { return e.Ref })
			rep.Findings = append(rep.Findings, Finding{EventID: g[0].ID, Ref: g[0].Ref, Problem: "it has events but no row in the payouts table (deleted)"})
		case events.next == nil || payouts.next.p.Ref < events.next.Ref:
			rep.Findings = append(rep.Findings, Finding{Ref: payouts.next.p.Ref, Problem: "it has no events (inserted by hand)"})
			rep.Payouts++
			payouts.advance()
		default:
			row := *payouts.next
			r := replayOf(events.group(func(e *ChainEvent) string { return e.Ref }), row.salt, rep)
			for _, problem := range r.compare(row.p, row.amount, row.salt) {
				rep.Findings = append(rep.Findings, Finding{Ref: row.p.Ref, Problem: problem})
			}
			rep.Payouts++
			payouts.advance()
		}
		if events.err != nil || payouts.err != nil {
			return errors.Join(events.err, payouts.err)
		}
	}
	return nil
}

// stream reads rows one ahead.
type stream[T any] struct {
	rows *sql.Rows
	scan func(scanner) (T, error)
	next *T
	err  error
}

func (s *stream[T]) advance() {
	s.next = nil
	if !s.rows.Next() {
		s.err = s.rows.Err()
		return
	}
	v, err := s.scan(s.rows)
	if err != nil {
		s.err = err
		return
	}
	s.next = &v
}

// group reads the rows that share the next row's key.
func (s *stream[T]) group(key func(*T) string) []T {
	k := key(s.next)
	var g []T
	for s.next != nil && key(s.next) == k {
		g = append(g, *s.next)
		s.advance()
	}
	return g
}

// replayOf replays one payout's events, oldest first, and adds a finding for each payload that
// does not match its digest.
func replayOf(events []ChainEvent, salt string, rep *ChainReport) *replay {
	first := events[0]
	// The first event's facts are the recorded details, and in a sealed ledger they may also
	// carry the invoice number and statuses.
	r := &replay{firstID: first.ID, state: first.To, recorded: decodeFacts(first.Facts), personal: first.Personal, latest: decodeFacts(first.Facts)}
	for _, e := range events[1:] {
		if problem := r.apply(e, salt); problem != "" {
			rep.Findings = append(rep.Findings, Finding{EventID: e.ID, Ref: e.Ref, Problem: problem})
		}
		r.state = e.To
	}
	return r
}

// compare lists where p's row differs from what its events say.
func (r *replay) compare(p Payout, amount, salt string) []string {
	var out []string
	differs := func(what, row, events string) {
		if row != events {
			out = append(out, fmt.Sprintf("%s in the payouts table is %q, its events say %q (edited by hand)", what, row, events))
		}
	}
	differs("state", string(p.State), r.state)
	differs("amount", amount, r.recorded["amount"])
	differs("provider", strconv.FormatInt(p.ProviderID, 10), r.recorded["provider_id"])
	differs("bank", p.Bank, r.recorded["bank"])
	differs("description", p.Description, r.recorded["description"])
	differs("run", p.RunID, r.recorded["run_id"])
	differs("line", strconv.Itoa(p.Line), r.recorded["line"])
	differs("invoice number", p.InvoiceNo, r.latest["invoice_no"])
	differs("transaction status", p.TransactionStatus, r.latest["transaction_status"])
	differs("bank reference", p.BankReferenceNo, r.latest["bank_reference_no"])
	if r.purge != nil {
		differs("masked name", p.Recipient, r.purge["recipient"])
		differs("masked account number", p.Account, r.purge["account"])
		return out
	}
	if len(r.maskedIDs) > 0 {
		out = append(out, fmt.Sprintf("the payload of event %d was replaced but the payout was never purged", r.maskedIDs[0]))
	}
	if salt == "" || personalDigest(salt, "recipient", p.Recipient, "account", p.Account) != r.personal {
		out = append(out, fmt.Sprintf("name or account number does not match the digest recorded by event %d (edited by hand)", r.firstID))
	}
	return out
}
