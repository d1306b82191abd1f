package ledger

import (
	"fmt"
	"time"
)

// What VerifyChain checks of each event beyond its hash: that it follows from the events before
// it as the program writes them.

// ClockAllowance is how far an event's time may fall behind the event before it: writers on
// several hosts stamp events with their own clocks. An event further back was backdated.
const ClockAllowance = time.Minute

// eventProblems is what is wrong with event e of table by itself and after the event before
// it (prevID, stamped prevAt): a payload its hash does not cover and, when order is set, a move
// the state machine does not allow or a time going backwards.
func eventProblems(e ChainEvent, table string, prevID int64, prevAt string, order bool) []string {
	var problems []string
	if order && table == "events" && e.Ref != "" && e.From != "" && e.From != e.To && !Allowed(State(e.From), State(e.To)) {
		problems = append(problems, fmt.Sprintf("it moves the payout from %s to %s, which the state machine does not allow (written by hand)", e.From, e.To))
	}
	if order && backdated(e.At, prevAt) {
		problems = append(problems, fmt.Sprintf("its time %s is earlier than event %d's, %s (backdated, or written by hand)", e.At, prevID, prevAt))
	}
	if table == "events" && e.Ref == "" {
		if p := ledgerPayloadProblem(e); p != "" {
			problems = append(problems, p)
		}
	}
	return problems
}

// isGenesis says whether e is the approval policy's genesis (see checkGenesis).
func isGenesis(e ChainEvent) bool {
	return e.Ref == "" && e.To == EventPolicy && decodeFacts(e.Facts)["genesis"] != ""
}

// backdated says whether an event stamped at comes more than ClockAllowance before the event
// before it, stamped before. Times that do not parse are left to the hash to judge.
func backdated(at, before string) bool {
	t, err := parseTime(at)
	if err != nil {
		return false
	}
	b, err := parseTime(before)
	return err == nil && t.Before(b.Add(-ClockAllowance))
}

// ledgerPayloadProblem checks the payload of an event about the ledger, which its hash does not
// cover: only a plan's event has one, the statement whose SHA-256 its facts hold (or purge's
// mask of it).
func ledgerPayloadProblem(e ChainEvent) string {
	switch {
	case e.To != EventPlan && e.Payload != "":
		return "its payload is set, but an event about the ledger carries none (edited by hand)"
	case e.To == EventPlan && e.Payload != PurgedPayload && sha256Hex(e.Payload) != decodeFacts(e.Facts)["plan_sha256"]:
		return "its payload is not the plan statement its plan_sha256 names (edited by hand)"
	}
	return ""
}
