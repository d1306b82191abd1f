package callbacks

import (
	"context"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payout/payout/ledger"
)

// CheckName compares the name the bank holds for the account (a callback's display_name) with
// the payout's recipient and returns ledger.NameMatch or ledger.NameMismatch with the reason, or
// "" when there is nothing to compare: no display name, or a recipient_reference that is a
// reference (it has digits) rather than a name.
func CheckName(recipient, displayName string) (check, reason string) {
	if strings.TrimSpace(displayName) == "" {
		return "", "no name from the bank"
	}
	if strings.ContainsFunc(recipient, unicode.IsDigit) || len(parseName(recipient).words) == 0 {
		return "", "recipient_reference is a reference, not a name: not compared"
	}
	if ok, why := NamesMatch(recipient, displayName); !ok {
		return ledger.NameMismatch, why
	}
	return ledger.NameMatch, ""
}

// maxDisplayNameRunes bounds the bank's name kept in the ledger.
const maxDisplayNameRunes = 200

// recordName keeps the name the bank holds for p's account (a callback's display_name) and its
// verdict against the recipient, without touching the payout's state, unless the callback's own
// changes already carried them (noted, by noteName): a second write would find them there. A
// callback without one changes nothing.
func (h *Handler) recordName(ctx context.Context, log *slog.Logger, p ledger.Payout, displayName string, noted bool) error {
	displayName = cleanDisplayName(displayName)
	if displayName == "" {
		return nil
	}
	check, reason := CheckName(p.Recipient, displayName)
	if !noted {
		if err := h.cfg.Ledger.SetNameCheck(ctx, p.Ref, displayName, check); err != nil {
			return err
		}
	}
	if check == ledger.NameMismatch {
		// The names stay out of the log: they are personal data, and `payout status REF` shows them.
		log.Warn("the bank's name for the account does not match the recipient: flagged, the payout's state is unchanged", "reason", reason)
	}
	return nil
}

// noteName keeps the bank's name for the account and its check with the last of a callback's
// changes, the event a reader of the payout's history sees, and says there when the name differs
// from the recipient.
func noteName(changes []ledger.Change, p ledger.Payout, displayName string) {
	displayName = cleanDisplayName(displayName)
	if len(changes) == 0 || displayName == "" {
		return
	}
	last := &changes[len(changes)-1]
	check, _ := CheckName(p.Recipient, displayName)
	last.DisplayName, last.NameCheck = displayName, check
	if check == ledger.NameMismatch {
		last.Detail += "; the bank's name for the account differs from the recipient"
	}
}

// cleanDisplayName makes a display name one line of printable text of bounded length.
func cleanDisplayName(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(s) > maxDisplayNameRunes {
		s = string([]rune(s)[:maxDisplayNameRunes])
	}
	return s
}
