package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/payout/payout/ledger"
)

// purgeFact is the fact a purge event carries: the day before which it purged.
const purgeFact = "purged_before"

// payoutReplay is what one payout's events in a pack say of it: the state their last event left
// it in, the details its first event recorded, the last invoice number and status set, and its
// personal data's salted digest, or the masked forms of its purge. Fields, not maps: a pack may
// name many payouts, and this is what the verifier keeps of each.
type payoutReplay struct {
	firstID                        int64
	state                          string
	recordedBy                     string // the run that recorded it
	amount, providerID, bank       string
	invoiceNo, transactionStatus   string
	personal, salt                 string
	purged                         bool
	maskedRecipient, maskedAccount string
	rows                           int // report rows that named it
}

// set takes the facts an event set that the reports show.
func (p *payoutReplay) set(facts map[string]string) {
	if v, ok := facts["invoice_no"]; ok {
		p.invoiceNo = v
	}
	if v, ok := facts["transaction_status"]; ok {
		p.transactionStatus = v
	}
}

// checkEvents reads events.jsonl a line at a time: each event on its own, each against the one
// before it when their ids follow each other (a run's events are not consecutive in the ledger's
// chain), and each against what its payout's events before it left.
func (v *packVerifier) checkEvents(r io.Reader, head ledger.ChainHead) error {
	v.payouts = map[string]*payoutReplay{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), v.lim.Line)
	var prev ledger.ChainHead
	for line := 1; sc.Scan(); line++ {
		var e ledger.EvidenceEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			v.finding("%s line %d: not an event: %v", eventsMember, line, err)
			continue
		}
		v.rep.Events++
		problems := eventProblems(e, prev, head)
		if p, err := v.replay(e); err != nil {
			return err
		} else if p != "" {
			problems = append(problems, p)
		}
		if len(problems) > 0 {
			v.finding("event %d (payout %s): %s", e.ID, e.Ref, strings.Join(problems, "; "))
		}
		prev = ledger.ChainHead{ID: e.ID, Hash: e.Hash}
	}
	if err := sc.Err(); err != nil {
		v.finding("%s: %v (a line longer than %d bytes is not an event)", eventsMember, err, v.lim.Line)
	}
	// No events is what a run that paid nothing leaves (a file rejected as a whole); a report
	// row of a payout is checked against its events, and one without them is named there.
	v.rep.Payouts = len(v.payouts)
	return nil
}

// eventProblems checks an event on its own, against the one before it in the pack, and against
// the chain head the pack was cut at.
func eventProblems(e ledger.EvidenceEvent, prev, head ledger.ChainHead) []string {
	var problems []string
	if ledger.HashEvent(e.ChainEvent) != e.Hash {
		problems = append(problems, "its content does not match its hash")
	}
	if e.ID <= prev.ID {
		problems = append(problems, fmt.Sprintf("it is out of order (after event %d)", prev.ID))
	} else if e.ID == prev.ID+1 && e.PrevHash != prev.Hash {
		problems = append(problems, fmt.Sprintf("its prev_hash is not the hash of event %d", prev.ID))
	}
	if e.ID > head.ID || e.ID == head.ID && e.Hash != head.Hash {
		problems = append(problems, "it does not fit the chain head "+head.String())
	}
	if e.Salt != "" && e.Payload != "" && e.Payload != ledger.PurgedPayload && ledger.PayloadDigest(e.Salt, e.Payload) != e.Personal {
		problems = append(problems, "its payload does not match its digest")
	}
	return problems
}

// replay applies e to its payout's record. It says what is wrong when e does not follow from
// the events before it: a payout's first event records it (from no state), and every later one
// starts from the state the one before left.
func (v *packVerifier) replay(e ledger.EvidenceEvent) (string, error) {
	if e.Ref == "" { // an event of the ledger, not of a payout
		if e.To == ledger.EventApproved && e.RunID == v.rep.Info.RunID {
			facts := decodeFacts(e.Facts)
			if sha := facts["file_sha256"]; sha != v.rep.Info.InputSHA256 {
				return fmt.Sprintf("it records a signature of a plan of SHA-256 %s, the run read %s", sha, v.rep.Info.InputSHA256), nil
			}
		}
		return "", nil
	}
	facts := decodeFacts(e.Facts)
	p := v.payouts[e.Ref]
	if p == nil {
		if len(v.payouts) >= v.lim.Payouts {
			return "", fmt.Errorf("%w: %s names more than %d payouts", ErrPackTooLarge, eventsMember, v.lim.Payouts)
		}
		p = &payoutReplay{firstID: e.ID, state: e.To, recordedBy: facts["run_id"], amount: facts["amount"], providerID: facts["provider_id"], bank: facts["bank"],
			personal: e.Personal, salt: e.Salt}
		p.set(facts)
		v.payouts[e.Ref] = p
		if e.From != "" {
			return fmt.Sprintf("the pack lacks the events before it: it starts from %s, and the payout's first event records it", e.From), nil
		}
		return "", nil
	}
	problem := ""
	if e.From != p.state {
		problem = fmt.Sprintf("it moves the payout from %s, the events before it in the pack leave it %s (an event is missing)", e.From, p.state)
	}
	p.state = e.To
	if e.Salt != p.salt {
		problem = strings.TrimPrefix(problem+"; its payout's salt differs from its other events'", "; ")
	}
	if facts[purgeFact] != "" {
		p.purged, p.maskedRecipient, p.maskedAccount = true, facts["recipient"], facts["account"]
		return problem, nil
	}
	p.set(facts)
	return problem, nil
}

// decodeFacts reads an event's facts; text that is not a JSON object of strings reads as none
// (the event's hash covers the text, so a change shows there).
func decodeFacts(s string) map[string]string {
	m := map[string]string{}
	if s != "" {
		_ = json.Unmarshal([]byte(s), &m)
	}
	return m
}
