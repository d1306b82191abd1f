package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Finding is one thing VerifyChain found wrong. EventID is 0 for a finding about a payout's row
// or about the file.
type Finding struct {
	EventID int64
	Ref     string
	Problem string
	// Table is the table of EventID when it is not events: row_events.
	Table string
}

func (f Finding) String() string {
	var b strings.Builder
	switch {
	case f.EventID != 0 && f.Table == "row_events":
		b.WriteString("row event " + strconv.FormatInt(f.EventID, 10) + " (row_events): ")
	case f.EventID != 0:
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
	Events    int // in the events table
	RowEvents int // in the row_events table
	Payouts   int
	Head      ChainHead
	Findings  []Finding
}

// snapshot opens a read-only transaction on a connection of its own, which sees one snapshot of
// the ledger until end rolls it back and hands the connection back.
func (db *DB) snapshot(ctx context.Context) (conn *sql.Conn, end func(), err error) {
	if conn, err = db.sql.Conn(ctx); err != nil {
		return nil, nil, err
	}
	if _, err := conn.ExecContext(ctx, db.eng.beginRead); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, func() {
		if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
			// Back in the pool with its read still open, the connection would answer later
			// reads from this snapshot: it is discarded instead.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		conn.Close()
	}, nil
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

	createdAt, updatedAt string // the first event's time; the last change's
	attempts, notFound   int
	firstNotFoundAt      string
}

// VerifyChain checks the whole ledger in one consistent read: PRAGMA quick_check; every event's
// hash against its content and the previous event's hash, and the ids for gaps; every payload
// against its digest; and every payout's row against what its events say (state, recorded
// details, invoice number and statuses, name and account number through their digest, or the
// masked forms of its purge). It names each event or payout that does not match.
func (db *DB) VerifyChain(ctx context.Context) (ChainReport, error) {
	conn, end, err := db.snapshot(ctx)
	if err != nil {
		return ChainReport{}, fmt.Errorf("verify: %w", err)
	}
	defer end()
	other := conn
	if db.eng.secondReader != nil {
		if other, err = db.eng.secondReader(db, ctx, conn); err != nil {
			return ChainReport{}, fmt.Errorf("verify: %w", err)
		}
		defer other.Close()
		defer other.ExecContext(context.Background(), "ROLLBACK")
	}
	var rep ChainReport
	if db.eng.checkStorage != nil {
		if err := db.eng.checkStorage(ctx, conn, &rep); err != nil {
			return damaged(rep, err)
		}
	}
	if err := walkChain(ctx, conn, &rep); err != nil {
		return damaged(rep, fmt.Errorf("verify: events: %w", err))
	}
	if err := replayPayouts(ctx, db.eng, conn, other, &rep); err != nil {
		return damaged(rep, fmt.Errorf("verify: payouts: %w", err))
	}
	if err := verifyTotals(ctx, conn, &rep); err != nil {
		return damaged(rep, fmt.Errorf("verify: state totals: %w", err))
	}
	for i := range rowTables {
		if err := verifyRowTable(ctx, db.eng, conn, other, &rowTables[i], &rep); err != nil {
			return damaged(rep, fmt.Errorf("verify: %s: %w", rowTables[i].name, err))
		}
	}
	if err := db.eng.verifySchema(db, ctx, conn, &rep); err != nil {
		return damaged(rep, fmt.Errorf("verify: schema: %w", err))
	}
	return rep, nil
}

const chainEventColumns = `id, ref, run_id, at, from_state, to_state, detail, payload, actor, version, facts, personal, prev_hash, hash`

func scanChainEvent(s scanner) (ChainEvent, error) {
	var e ChainEvent
	err := s.Scan(&e.ID, &e.Ref, &e.RunID, &e.At, &e.From, &e.To, &e.Detail, &e.Payload, &e.Actor, &e.Version,
		&e.Facts, &e.Personal, &e.PrevHash, &e.Hash)
	return e, err
}

// walkChain checks every event in id order: ids without gaps, each prev_hash the hash before it,
// each hash its content's, and eventProblems.
func walkChain(ctx context.Context, conn *sql.Conn, rep *ChainReport) error {
	rows, err := conn.QueryContext(ctx, `SELECT 'events', `+chainEventColumns+` FROM events
		UNION ALL SELECT 'row_events', `+chainEventColumns+` FROM row_events ORDER BY 2`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var prev ChainHead
	var prevAt string
	// The moves and times are checked from the policy's genesis on: older versions wrote the
	// events before it, some of them summing up several moves in one.
	genesis := false
	for rows.Next() {
		var table string
		e, err := scanChainEvent(headScanner{rows: rows, head: []any{&table}})
		if err != nil {
			return err
		}
		genesis = genesis || isGenesis(e)
		problems := eventProblems(e, table, prev.ID, prevAt, genesis)
		prevAt = e.At
		if e.ID != prev.ID+1 {
			problems = append(problems, fmt.Sprintf("events %d to %d are missing (deleted)", prev.ID+1, e.ID-1))
		}
		if e.PrevHash != prev.Hash {
			problems = append(problems, fmt.Sprintf("its prev_hash is not the hash of event %d (an event before it was deleted, inserted or rewritten)", prev.ID))
		}
		if HashEvent(e) != e.Hash {
			problems = append(problems, "its content does not match its hash (edited, or inserted by hand)")
		}
		if table == "row_events" {
			if p := rowSaltProblem(e); p != "" {
				problems = append(problems, p)
			}
		}
		if len(problems) > 0 {
			f := Finding{EventID: e.ID, Ref: e.Ref, Problem: strings.Join(problems, "; "), Table: table}
			if table == "row_events" {
				f.Ref, f.Problem = "", "row "+e.Ref+": "+f.Problem
			}
			rep.Findings = append(rep.Findings, f)
		}
		prev = ChainHead{ID: e.ID, Hash: e.Hash}
		if table == "row_events" {
			rep.RowEvents++
		} else {
			rep.Events++
		}
	}
	rep.Head = prev
	return rows.Err()
}

// rowSaltProblem checks a row event's salt (its payload), which is outside the hash so that purge
// can forget it: empty for a table without personal columns, else a salt newSalt makes or
// PurgedPayload. Only the salt of a row's latest row event can be checked against the row; an
// earlier one replaced by another well-formed salt is not found, and changes nothing a command
// reads: it only keeps the row's earlier personal values from being tried against their digests,
// as a purge does.
func rowSaltProblem(e ChainEvent) string {
	table, _, _ := strings.Cut(e.Ref, "/")
	personal := false
	for i := range rowTables {
		if rowTables[i].name == table {
			personal = len(rowTables[i].personal) > 0
		}
	}
	switch {
	case !personal && e.Payload != "":
		return "its payload is set, but table " + table + " has no personal columns to salt (edited by hand)"
	case personal && e.Payload != PurgedPayload && !isSalt(e.Payload):
		return "its salt in row_events.payload is not one the ledger makes (edited by hand)"
	}
	return ""
}

// isSalt says whether s has newSalt's form: 32 lowercase hexadecimal digits.
func isSalt(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
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
	r.count(e, facts)
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

// count replays what an event did to the row's times and counters. A name event (the bank's
// name) leaves them; an attestation (the upgrade that brought them into the chain) sets them.
func (r *replay) count(e ChainEvent, facts map[string]string) {
	switch {
	case facts[attestFact] != "":
		r.createdAt, r.updatedAt = facts["created_at"], facts["updated_at"]
		r.attempts, _ = strconv.Atoi(facts["attempts"])
		r.notFound, _ = strconv.Atoi(facts["not_found_count"])
		r.firstNotFoundAt = facts["first_not_found_at"]
		return
	case facts[nameOnlyFact] != "":
		return
	}
	r.updatedAt = e.At
	if facts["attempts"] == "0" { // a release: the count of sends starts again
		r.attempts = 0
	}
	if facts["attempt"] != "" {
		r.attempts++
	}
	switch facts["not_found"] {
	case "count":
		r.notFound++
		if r.firstNotFoundAt == "" {
			r.firstNotFoundAt = e.At
		}
	case "first":
		r.notFound, r.firstNotFoundAt = 1, e.At
	case "reset":
		r.notFound, r.firstNotFoundAt = 0, ""
	}
}

// payoutRow is a payouts row as stored, every column as text, and its salt ("" once purged).
type payoutRow struct {
	col  map[string]string
	salt string
}

// verifiedPayoutColumns are the payouts columns verify reads: every column of the table. A
// column added to payouts is added here and to compare, or the coverage test fails.
var verifiedPayoutColumns = []string{"ref", "run_id", "line", "recipient", "provider_id", "bank", "account", "amount",
	"description", "state", "invoice_no", "transaction_status", "bank_reference_no", "attempts", "not_found_count",
	"first_not_found_at", "last_error", "created_at", "updated_at", "display_name", "name_check", "retry_of", "refusal_confirmed", "claimed_by"}

// orZero is a counter's fact, "0" when the events never set it.
func orZero(fact string) string {
	if fact == "" {
		return "0"
	}
	return fact
}

// presentPayoutColumns are the verified columns the payouts table has: while a migration older
// than a column's seals the trail, that column is not there yet.
func presentPayoutColumns(ctx context.Context, e *engine, conn txQuerier) ([]string, error) {
	have, err := tableColumns(ctx, e, conn, "payouts")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range verifiedPayoutColumns {
		if slices.Contains(have, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func scanPayoutRow(s scanner, cols []string) (payoutRow, error) {
	r := payoutRow{col: make(map[string]string, len(cols))}
	vals := make([]string, len(cols))
	dest := []any{&r.salt}
	for i := range vals {
		dest = append(dest, &vals[i])
	}
	if err := s.Scan(dest...); err != nil {
		return r, err
	}
	for i, c := range cols {
		r.col[c] = vals[i]
	}
	return r, nil
}

// replayPayouts replays each payout's events against its row. It reads the events by reference
// and the payouts by reference side by side, so it holds one payout's events at a time whatever
// the size of the ledger.
func replayPayouts(ctx context.Context, e *engine, conn, other txQuerier, rep *ChainReport) error {
	return eachReplay(ctx, e, conn, other, rep, "", nil, func(r *replay, row payoutRow) {
		for _, problem := range r.compare(row.col, row.salt) {
			rep.Findings = append(rep.Findings, Finding{Ref: row.col["ref"], Problem: problem})
		}
	})
}

// eachReplay replays the events of each payout whose reference matches where (a condition on
// ref, or "") and calls each with the replay and the payout's row; events without a row and rows
// without events are findings.
func eachReplay(ctx context.Context, e *engine, conn, other txQuerier, rep *ChainReport, where string, args []any, each func(*replay, payoutRow)) error {
	// Events about the ledger itself (empty ref: the approval policy, the signatures a run went
	// ahead on) are about no payout.
	cond := "WHERE ref <> ''"
	if where != "" {
		cond += " AND (" + where + ")"
		where = "WHERE " + where
	}
	evRows, err := conn.QueryContext(ctx, `SELECT `+chainEventColumns+` FROM events `+cond+` ORDER BY ref, id`, args...)
	if err != nil {
		return err
	}
	defer evRows.Close()
	cols, err := presentPayoutColumns(ctx, e, other)
	if err != nil {
		return err
	}
	pRows, err := other.QueryContext(ctx, `SELECT COALESCE((SELECT salt FROM payout_salts s WHERE s.ref = payouts.ref), ''), `+
		strings.Join(cols, ", ")+` FROM payouts `+where+` ORDER BY ref`, args...)
	if err != nil {
		return err
	}
	defer pRows.Close()
	events := &stream[ChainEvent]{rows: evRows, scan: scanChainEvent}
	payouts := &stream[payoutRow]{rows: pRows, scan: func(s scanner) (payoutRow, error) { return scanPayoutRow(s, cols) }}
	events.advance()
	payouts.advance()
	for events.next != nil || payouts.next != nil {
		switch {
		case payouts.next == nil || events.next != nil && events.next.Ref < payouts.next.col["ref"]:
			g := events.group(func(e *ChainEvent) string { return e.Ref })
			rep.Findings = append(rep.Findings, Finding{EventID: g[0].ID, Ref: g[0].Ref, Problem: "it has events but no row in the payouts table (deleted)"})
		case events.next == nil || payouts.next.col["ref"] < events.next.Ref:
			rep.Findings = append(rep.Findings, Finding{Ref: payouts.next.col["ref"], Problem: "it has no events (inserted by hand)"})
			rep.Payouts++
			payouts.advance()
		default:
			row := *payouts.next
			each(replayOf(events.group(func(e *ChainEvent) string { return e.Ref }), row.salt, rep), row)
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
	r := &replay{firstID: first.ID, state: first.To, recorded: decodeFacts(first.Facts), personal: first.Personal,
		latest: decodeFacts(first.Facts), createdAt: first.At, updatedAt: first.At}
	for _, e := range events[1:] {
		if problem := r.apply(e, salt); problem != "" {
			rep.Findings = append(rep.Findings, Finding{EventID: e.ID, Ref: e.Ref, Problem: problem})
		}
		r.state = e.To
	}
	return r
}

// compare lists where a payouts row differs from what its events say.
func (r *replay) compare(row map[string]string, salt string) []string {
	var out []string
	differs := func(column, events string) {
		if row[column] != events {
			out = append(out, fmt.Sprintf("%s in the payouts table is %q, its events say %q (edited by hand)", column, row[column], events))
		}
	}
	differs("state", r.state)
	for _, c := range []string{"amount", "provider_id", "bank", "description", "run_id", "line"} {
		differs(c, r.recorded[c])
	}
	for _, c := range []string{"invoice_no", "transaction_status", "bank_reference_no", "last_error", "retry_of"} {
		differs(c, r.latest[c])
	}
	if check := r.latest["name_check"]; check == nameNotComparedFact {
		differs("name_check", NameNotCompared)
	} else {
		differs("name_check", check)
	}
	differs("created_at", r.createdAt)
	differs("updated_at", r.updatedAt)
	differs("attempts", strconv.Itoa(r.attempts))
	differs("not_found_count", strconv.Itoa(r.notFound))
	differs("first_not_found_at", r.firstNotFoundAt)
	if _, ok := row["refusal_confirmed"]; ok { // not yet there while an older migration seals the trail
		differs("refusal_confirmed", orZero(r.latest["refusal_confirmed"]))
	}
	if _, ok := row["claimed_by"]; ok {
		differs("claimed_by", r.latest["claimed_by"])
	}
	if r.purge != nil {
		differs("recipient", r.purge["recipient"])
		differs("account", r.purge["account"])
		return out
	}
	if len(r.maskedIDs) > 0 {
		out = append(out, fmt.Sprintf("the payload of event %d was replaced but the payout was never purged", r.maskedIDs[0]))
	}
	if salt == "" || personalDigest(salt, "recipient", row["recipient"], "account", row["account"]) != r.personal {
		out = append(out, fmt.Sprintf("recipient or account in the payouts table, or the payout's salt in payout_salts, does not match the digest recorded by event %d (edited by hand)", r.firstID))
	}
	switch name := r.latest[nameFact]; {
	case name == PurgedPayload:
	case name == "" && row["display_name"] != "":
		out = append(out, "display_name in the payouts table is set, its events recorded none (edited by hand)")
	case name != "" && (salt == "" || personalDigest(salt, "display_name", row["display_name"]) != name):
		out = append(out, "display_name in the payouts table does not match the digest its events recorded (edited by hand)")
	}
	return out
}
