package callbacks

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payout/payout/ledger"
)

// nameTitles are honorifics and titles that come before a name (or before a father's name,
// after bin or a/l) and say nothing about who the person is. Words that are also common names
// (Tan, Toh, Syed, Wan, Nik) are not in it.
var nameTitles = wordSet("encik", "en", "puan", "pn", "cik", "tuan", "tn", "dr", "dato", "datuk", "datin",
	"haji", "hj", "hajah", "hjh", "mr", "mrs", "ms", "miss", "mdm", "madam", "prof", "ir")

// nameTitleTails follow a title as one honour: Dato' Sri, Datuk Seri, Datin Paduka.
var nameTitleTails = wordSet("sri", "seri", "paduka", "wira", "setia")

// namePairTitles are two-word titles whose first word is also a name: Tan Sri, Puan Sri, Toh Puan.
var namePairTitles = map[string]map[string]bool{"tan": wordSet("sri", "seri"), "puan": wordSet("sri", "seri"), "toh": wordSet("puan")}

// nameConnectors join a person's name to a parent's: they are dropped, so that "bin" written
// out, abbreviated or left off compares alike.
var nameConnectors = wordSet("bin", "binti", "binte", "bte", "bt", "a/l", "a/p", "s/o", "d/o", "w/o", "anak", "ak")

// nameVariants are spellings and abbreviations that banks use for the same name word.
var nameVariants = map[string]string{
	"mohd": "muhammad", "muhd": "muhammad", "md": "muhammad", "mhd": "muhammad", "mohamad": "muhammad",
	"mohammad": "muhammad", "mohamed": "muhammad", "mohammed": "muhammad", "muhamad": "muhammad",
	"muhammed": "muhammad", "muhamed": "muhammad", "abd": "abdul",
}

// truncatedNameRunes is how long a bank's name must be for its last word to be taken as cut
// short when it has a single word: banks cap the name they hold at some 20 to 40 characters.
const truncatedNameRunes = 12

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// CheckName compares the name the bank holds for the account (a callback's display_name) with
// the payout's recipient and returns ledger.NameMatch or ledger.NameMismatch with the reason, or
// "" when there is nothing to compare: no display name, or a recipient_reference that is a
// reference (it has digits) rather than a name.
func CheckName(recipient, displayName string) (check, reason string) {
	if strings.TrimSpace(displayName) == "" {
		return "", "no name from the bank"
	}
	if strings.ContainsFunc(recipient, unicode.IsDigit) || len(nameWords(recipient)) == 0 {
		return "", "recipient_reference is a reference, not a name: not compared"
	}
	if ok, why := NamesMatch(recipient, displayName); !ok {
		return ledger.NameMismatch, why
	}
	return ledger.NameMatch, ""
}

// NamesMatch reports whether displayName, the name a bank holds for an account, names the same
// person as recipient, and why. Case, spacing and punctuation do not count; titles (Encik, Dato'
// Sri, Haji, Mr...) and the connectors to a parent's name (bin, binti, a/l, a/p, s/o, anak...)
// are dropped; Mohd and Abd stand for Muhammad and Abdul; word order does not count. The names
// match when the words of one are all among the words of the other, and that shorter one has at
// least two words (or both have one): a bank's name may leave out the father's name or a
// Western given name, or the file may. An initial ("M." or "M") matches a word that starts with
// it; two words written together ("Weiming") match them apart; the last word of the bank's name
// may be cut short (banks cap names' length) when it has two words or more, or 12 characters.
func NamesMatch(recipient, displayName string) (bool, string) {
	r, d := nameWords(recipient), nameWords(displayName)
	if len(d) == 0 {
		return false, "the bank's name has no name words"
	}
	if len(r) == 0 {
		return false, "the recipient has no name words"
	}
	r, d = joinSplitWords(r, d), joinSplitWords(d, r)
	if slices.Equal(r, d) {
		return true, "same name"
	}
	cutShort := len(d) >= 2 || utf8.RuneCountInString(strings.TrimSpace(displayName)) >= truncatedNameRunes
	if cutShort {
		d = dropCutConnector(d)
	}
	matchedR, fullR := matchWords(d, r, cutShort)
	matchedD, fullD := matchWords(r, d, false)
	inR := matchedR == len(d) && fullR >= 1 && (len(d) >= 2 || len(r) == 1)
	inD := matchedD == len(r) && fullD >= 1 && (len(r) >= 2 || len(d) == 1)
	switch {
	case inR && len(d) == len(r) && fullR == len(d):
		return true, "same words in another order"
	case (inR || inD) && len(d) == len(r):
		return true, "same words, some as initials or cut short"
	case inR && len(d) < len(r):
		return true, "the bank's name leaves words out (shortened, or cut at the bank's length limit)"
	case inD && len(r) < len(d):
		return true, "the bank's name has more words than the recipient's"
	case matchedR == len(d) || matchedD == len(r):
		return false, "the names share too little to tell the same person (one word, or initials only)"
	}
	return false, fmt.Sprintf("%d of the %d words of the bank's name are not in the recipient's name", len(d)-matchedR, len(d))
}

// dropCutConnector drops the last word of a bank's name when it is a connector cut short by
// the bank's length limit: "AHMAD FAIZAL BI" for Ahmad Faizal bin Ismail.
func dropCutConnector(d []string) []string {
	last := d[len(d)-1]
	for c := range nameConnectors {
		if len(d) >= 2 && len(last) < len(c) && strings.HasPrefix(c, last) {
			return d[:len(d)-1]
		}
	}
	return d
}

// nameWords returns the name words of s, folded to one case, without titles and connectors,
// with known variants replaced.
func nameWords(s string) []string {
	var raw []string
	for _, field := range strings.Fields(foldName(s)) {
		if w := strings.TrimRight(field, "."); nameConnectors[w] && strings.Contains(w, "/") {
			raw = append(raw, w)
			continue
		}
		raw = append(raw, splitNameWord(field)...)
	}
	words := make([]string, 0, len(raw))
	titlesAllowed := true
	for i := 0; i < len(raw); i++ {
		w := raw[i]
		switch {
		case titlesAllowed && i+1 < len(raw) && namePairTitles[w][raw[i+1]]:
			i++
		case titlesAllowed && nameTitles[w]:
			for i+1 < len(raw) && nameTitleTails[raw[i+1]] {
				i++
			}
		case len(words) > 0 && nameConnectors[w]:
			titlesAllowed = true // a father's title follows: bin Haji Ismail
		default:
			if v, ok := nameVariants[w]; ok {
				w = v
			}
			words = append(words, w)
			titlesAllowed = false
		}
	}
	return words
}

// foldName folds every letter to one case (Unicode simple folding, so that a Kelvin sign or a
// long s compares as the letter it looks like) and typographic apostrophes to '.
func foldName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2018', '\u2019', '`', '\u00b4':
			return '\''
		}
		return unicode.ToLower(unicode.ToUpper(r))
	}, s)
}

// splitNameWord splits a field at punctuation: an apostrophe joins (Dato' is dato, O'Neil is
// oneil), anything else that is not a letter, mark or digit separates (M. Ali, Wei-Ming, Ali@Abu).
func splitNameWord(field string) []string {
	field = strings.ReplaceAll(field, "'", "")
	return strings.FieldsFunc(field, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsDigit(r)
	})
}

// joinSplitWords joins neighbouring words of a whose concatenation is a word of b: "wei ming"
// against "weiming".
func joinSplitWords(a, b []string) []string {
	out := make([]string, 0, len(a))
	for i := 0; i < len(a); i++ {
		if i+1 < len(a) && slices.Contains(b, a[i]+a[i+1]) && !slices.Contains(b, a[i]) {
			out = append(out, a[i]+a[i+1])
			i++
			continue
		}
		out = append(out, a[i])
	}
	return out
}

// matchWords pairs words of small with distinct words of big: equal words first, then initials,
// then (with cutShort) small's last word as the start of a longer word. It returns how many
// words of small found a partner and how many of those are equal words.
func matchWords(small, big []string, cutShort bool) (matched, full int) {
	used := make([]bool, len(big))
	done := make([]bool, len(small))
	pass := func(fits func(i int, s, b string) bool) int {
		n := 0
		for i, s := range small {
			if done[i] {
				continue
			}
			for j, b := range big {
				if !used[j] && fits(i, s, b) {
					used[j], done[i] = true, true
					n++
					break
				}
			}
		}
		return n
	}
	full = pass(func(_ int, s, b string) bool { return s == b })
	matched = full + pass(func(_ int, s, b string) bool { return initialOf(s, b) || initialOf(b, s) })
	if cutShort {
		last := len(small) - 1
		matched += pass(func(i int, s, b string) bool { return i == last && len(s) < len(b) && strings.HasPrefix(b, s) })
	}
	return matched, full
}

// initialOf reports whether a is a one-letter initial of the word b.
func initialOf(a, b string) bool {
	r, size := utf8.DecodeRuneInString(a)
	return size == len(a) && r != utf8.RuneError && len(b) > size && strings.HasPrefix(b, a)
}

// maxDisplayNameRunes bounds the bank's name kept in the ledger.
const maxDisplayNameRunes = 200

// recordName keeps the name the bank holds for p's account (a callback's display_name) and its
// verdict against the recipient, without touching the payout's state. A callback without one
// changes nothing.
func (h *Handler) recordName(ctx context.Context, log *slog.Logger, p ledger.Payout, displayName string) error {
	displayName = cleanDisplayName(displayName)
	if displayName == "" {
		return nil
	}
	check, reason := CheckName(p.Recipient, displayName)
	if err := h.cfg.Ledger.SetNameCheck(ctx, p.Ref, displayName, check); err != nil {
		return err
	}
	if check == ledger.NameMismatch {
		// The names stay out of the log: they are personal data, and `payout status REF` shows them.
		log.Warn("the bank's name for the account does not match the recipient: flagged, the payout's state is unchanged", "reason", reason)
	}
	return nil
}

// noteNameMismatch says in the last of a callback's changes, the event a reader of the payout's
// history sees, that the bank's name for the account differs from the recipient.
func noteNameMismatch(changes []ledger.Change, p ledger.Payout, displayName string) {
	if len(changes) == 0 {
		return
	}
	if check, _ := CheckName(p.Recipient, cleanDisplayName(displayName)); check == ledger.NameMismatch {
		changes[len(changes)-1].Detail += "; the bank's name for the account differs from the recipient"
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
