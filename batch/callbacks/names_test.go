package callbacks_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payout/payout/api"
	"github.com/payout/payout/api/sandbox"
	"github.com/payout/payout/batch/callbacks"
	"github.com/payout/payout/ledger"
)

func TestNamesMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		recipient, display string
		match              bool
	}{
		// Case, spacing and punctuation.
		{"Tan Mei Ling", "TAN MEI LING", true},
		{"  Tan   Mei  Ling ", "tan mei ling", true},
		{"Tan Wei-Ming", "TAN WEI MING", true},
		{"Tan Weiming", "TAN WEI MING", true},
		{"Wong Kah Hoe", "WONG KAHHOE", true},
		{"Siti Nur’Aisyah", "SITI NURAISYAH", true},
		{"Ahmad @ Ali bin Abu", "AHMAD ALI BIN ABU", true},
		// Word order: Chinese names surname first or last, with or without a Western name.
		{"Lim Wei Jie", "WEI JIE LIM", true},
		{"Jason Tan Wei Ming", "TAN WEI MING", true},
		{"Tan Wei Ming", "JASON TAN WEI MING", true},
		{"Lee Chee Keong", "Chee Keong, Lee", true},
		// Malay names: bin, binti and their abbreviations, or left off; Mohd and Abd.
		{"MUHAMMAD ALI BIN ABU", "Muhammad Ali Abu", true},
		{"Muhammad Ali bin Abu", "MOHD ALI B. ABU", true},
		{"Mohd Hafiz bin Abdullah", "MUHAMMAD HAFIZ BIN ABDULLAH", true},
		{"Abd Rahman bin Yusof", "ABDUL RAHMAN BN YUSOF", true},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA", true},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA BT TARUDIN", true},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA BTE TARUDIN", true},
		{"Nurul Aisyah", "NURUL AISYAH BINTI RAHMAN", true},
		{"Hidayah binti Kamal", "HIDAYAH KAMAL", true},
		// Titles, before the name or before the father's name.
		{"Encik Azman bin Hashim", "AZMAN BIN HASHIM", true},
		{"Azman bin Hashim", "EN. AZMAN HASHIM", true},
		{"Dato' Sri Haji Ahmad Zahid", "AHMAD ZAHID", true},
		{"Tan Sri Dr. Abdul Aziz bin Haji Omar", "ABDUL AZIZ OMAR", true},
		{"Puan Sri Zainab", "ZAINAB", true},
		{"Mdm Chan Pui Yee", "CHAN PUI YEE", true},
		{"Khairul Anuar bin Hj. Mahmud", "KHAIRUL ANUAR BIN MAHMUD", true},
		{"Hjh Rohani binti Ismail", "ROHANI ISMAIL", true},
		// Indian names: a/l, a/p, s/o, d/o written or left off.
		{"Muthu a/l Krishnan", "MUTHU A/L KRISHNAN", true},
		{"Muthu a/l Krishnan", "MUTHU KRISHNAN", true},
		{"Muthu a/l Krishnan", "MUTHU AL KRISHNAN", true},
		{"Priya a/p Subramaniam", "PRIYA D/O SUBRAMANIAM", true},
		{"Ravi s/o Shanmugam", "RAVI A/L SHANMUGAM", true},
		{"Ramasamy", "RAMASAMY", true},
		{"Kumar", "KUMAR A/L RAJU", true},
		{"Muthu a/l Krishnan", "MUTHU", true},
		{"Kumar a/l Raju", "RAJU A/L KUMAR", false},
		// Iban names: anak.
		{"Jimbun anak Lanyau", "JIMBUN AK LANYAU", true},
		// Initials.
		{"M. Ali bin Abu", "MUHAMMAD ALI BIN ABU", true},
		{"Muhammad Ali bin Abu", "M ALI ABU", true},
		{"K. Kavitha a/p Ramasamy", "KAVITHA RAMASAMY", true},
		{"Lim B.K.", "LIM BOON KIAT", true},
		{"Syed Ahmad Al-Hadi", "SYED AHMAD AL HADI", true},
		{"Syed Amir bin Syed Ali", "SYED AMIR SYED ALI", true},
		{"Syed Amir bin Syed Ali", "SYED AMIR BIN SYED A", true},
		// A name cut at the bank's length limit, even inside a word.
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA BINTI TARU", true},
		{"Ahmad Faizal bin Ismail", "AHMAD FAIZAL BIN IS", true},
		{"Tan Mei Ling", "TAN MEI LIN", true},
		{"Ahmad Faizal bin Ismail", "AHMAD FAIZAL BI", true},
		{"Muthu a/l Krishnan", "MUTHU A/", true},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA BINTI T", true},
		{"Kavitha Ramasamy", "KAVITHA RAMAS", true},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHA", true},
		// Another person.
		{"Tan Mei Ling", "LIM WEI JIE", false},
		{"Tan Mei Ling", "TAN MEI HUA", false},
		{"Muthu a/l Krishnan", "RAVI A/L KRISHNAN", false},
		{"Muhammad Ali bin Abu", "MUHAMMAD ALI BIN AHMAD", false},
		{"Ahmad bin Ali", "ALI BIN AHMAD", false},
		{"Ali bin Ahmad", "AHMAD", false},
		{"Muhammad Ali bin Abu", "ALI", false},
		{"Syed Amir bin Syed Ali", "SYED ALI", false},
		{"Siti Nurhaliza binti Tarudin", "SITI NURHALIZA AMINAH", false},
		{"Aisyah", "NURUL AISYAH BINTI RAHMAN", false},
		{"Nor Azlina binti Ahmad", "NUR AZLINA BINTI AHMAD", false},
		{"Siti Nurhaliza binti Tarudin", "SITI AMINAH BINTI TARUDIN", false},
		{"Nurul Aisyah binti Rahman", "Maybank", false},
		// Too little in common to tell.
		{"Tan Mei Ling", "TAN", false},
		{"Muhammad Ali", "M. A.", false},
		{"Ramasamy", "R", false},
		{"Lee Bin", "LEE HONG", false},
		// Words of a title are names elsewhere: Tan, Toh and En are kept as names.
		{"Tan Wei Ming", "WEI MING", true},
		{"Toh Kok Leong", "LIM KOK LEONG", false},
		{"Lim En Hui", "LIM HUI", true},
		{"Lim En Hui", "LIM HUI MIN", false},
		// Unicode: case folding, compatibility forms, accents on Latin letters; other scripts as written.
		{"KELVIN TAN", "\u212aelvin Tan", true},
		{"Tan Mei Ling", "\uff34\uff21\uff2e MEI LING", true},
		{"José Tan", "JOSE TAN", true},
		{"Zoë Lim", "ZOE LIM", true},
		{"陈美玲", "陈美玲", true},
		{"陈美玲", "TAN MEI LING", false},
		{"முத்து கிருஷ்ணன்", "முத்து கிருஷ்ணன்", true},
	}
	for _, c := range cases {
		got, why := callbacks.NamesMatch(c.recipient, c.display)
		if got != c.match {
			t.Errorf("NamesMatch(%q, %q) = %t (%s), want %t", c.recipient, c.display, got, why, c.match)
		}
		if why == "" {
			t.Errorf("NamesMatch(%q, %q) gives no reason", c.recipient, c.display)
		}
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		recipient, display, check string
	}{
		{"Tan Mei Ling", "", ledger.NameNotCompared},
		{"Tan Mei Ling", "   ", ledger.NameNotCompared},
		{"EMP-0042", "TAN MEI LING", ledger.NameNotCompared},
		{"Tan Mei Ling", "TAN MEI LING", ledger.NameMatch},
		{"Tan Mei Ling", "LIM WEI JIE", ledger.NameMismatch},
	}
	for _, c := range cases {
		if got, why := callbacks.CheckName(c.recipient, c.display); got != c.check || why == "" && got != ledger.NameMatch {
			t.Errorf("CheckName(%q, %q) = %q (%s), want %q", c.recipient, c.display, got, why, c.check)
		}
	}
}

// End to end through the sandbox: its bank holds another name for one account. The signed
// callbacks settle both payouts as usual; the one whose name differs is flagged, its state the
// same as the other's, and a second delivery of its callback changes nothing more.
func TestCallbackNameMismatchFromTheSandbox(t *testing.T) {
	t.Parallel()
	r := newCBRig(t)
	const token = "names-auth-token-0123456789"
	sb, client := newCallbackService(t, sandbox.Options{AuthToken: token, HashKey: []byte(cbHashKey), Seed: 7,
		SendCallbacks: true, SettleInterval: -1, DisplayNames: map[string]string{"NAME-2": "LIM WEI JIE"}})
	ctx := context.Background()
	recipients := map[string]string{"NAME-1": "Siti Nurhaliza binti Tarudin", "NAME-2": "Tan Mei Ling"}
	for _, ref := range []string{"NAME-1", "NAME-2"} {
		r.payoutTo(ref, recipients[ref], "", "250.00", ledger.Submitting)
		res, err := client.CreatePayout(ctx, api.CreatePayoutRequest{
			VirtualPoolReference: "POOL-1", PayoutServiceID: sandbox.DefaultProviders()[0].ID, Amount: decimal.RequireFromString("250.00"),
			ClientRedirectURL: "http://127.0.0.1:1/return", ClientCallbackURL: r.srv.URL + callbacks.Path,
			ThirdPartyAccountNo: "1234567890", RecipientReference: recipients[ref], PaymentDescription: "salary", ExternalInvoiceRef: ref,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.db.Apply(ctx, ledger.Change{Ref: ref, From: ledger.Submitting, To: ledger.Submitted,
			InvoiceNo: res.InvoiceNo, Detail: "accepted"}); err != nil {
			t.Fatal(err)
		}
	}
	sb.Settle()
	deadline := time.Now().Add(10 * time.Second)
	for sb.Stats().Callbacks+sb.Stats().CallbackFailures < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := sb.Stats(); st.Callbacks != 2 || st.CallbackFailures != 0 {
		t.Fatalf("sandbox callbacks: %d delivered, %d failed; want 2, 0", st.Callbacks, st.CallbackFailures)
	}

	want := map[string]ledger.NameCheck{
		"NAME-1": {Ref: "NAME-1", Recipient: recipients["NAME-1"], DisplayName: "SITI NURHALIZA BINTI TARUDIN", Check: ledger.NameMatch},
		"NAME-2": {Ref: "NAME-2", Recipient: recipients["NAME-2"], DisplayName: "LIM WEI JIE", Check: ledger.NameMismatch},
	}
	for ref, w := range want {
		if got := r.nameCheck(ref); got != w {
			t.Errorf("name check of %s: %+v, want %+v", ref, got, w)
		}
		if p := r.get(ref); p.State != ledger.Succeeded {
			t.Errorf("%s is %s after its callback, want SUCCEEDED whatever the name", ref, p.State)
		}
	}
	mismatches, err := r.db.NameChecks(ctx, ledger.NameFilter{Mismatches: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(mismatches) != 1 || mismatches[0].Ref != "NAME-2" {
		t.Fatalf("name mismatches %+v, want NAME-2 alone", mismatches)
	}
	evs := r.events("NAME-2")
	if last := evs[len(evs)-1]; last.To != ledger.Succeeded || !strings.Contains(last.Detail, "the bank's name for the account differs") {
		t.Fatalf("last event of NAME-2 %+v, want SUCCEEDED saying the name differs", last)
	}
	if strings.Contains(r.logs.String(), "LIM WEI JIE") || strings.Contains(r.logs.String(), "Tan Mei Ling") {
		t.Errorf("a name reached the log:\n%s", r.logs.String())
	}
	// The names came with the moves to SUCCEEDED, in their events: no second write, and the
	// mismatch is still logged.
	const flagged = "does not match the recipient: flagged"
	if n := r.store.nameWrites.Load(); n != 0 {
		t.Errorf("%d writes of a name alone beside the callbacks' moves, want none", n)
	}
	if n := strings.Count(r.logs.String(), flagged); n != 1 {
		t.Errorf("the mismatch logged %d times, want once:\n%s", n, r.logs.String())
	}

	// The service delivers the same callback again: a replay, still flagged, still SUCCEEDED.
	var rec sandbox.Record
	for _, x := range sb.Payouts() {
		if x.ExternalInvoiceRef == "NAME-2" {
			rec = x
		}
	}
	status, answer := r.post(cbSign(t, sb.CallbackPayload(rec), cbHashKey))
	if status != http.StatusOK || answer["message"] != callbacks.VerdictReplay {
		t.Fatalf("replay answered %d %v", status, answer)
	}
	if p := r.get("NAME-2"); p.State != ledger.Succeeded || len(r.events("NAME-2")) != len(evs) {
		t.Fatalf("replay moved NAME-2: %s, %d events (was %d)", p.State, len(r.events("NAME-2")), len(evs))
	}
	if got, _ := r.db.NameChecks(ctx, ledger.NameFilter{Mismatches: true}); len(got) != 1 {
		t.Fatalf("after the replay: %+v", got)
	}
	// A replay moves nothing, so its name is kept on its own (and found unchanged).
	if n := r.store.nameWrites.Load(); n != 1 {
		t.Errorf("%d writes of a name alone after the replay, want 1", n)
	}
	if n := strings.Count(r.logs.String(), flagged); n != 2 {
		t.Errorf("the mismatch logged %d times after the replay, want twice", n)
	}
}
